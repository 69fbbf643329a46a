import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, type Ran } from './testing/libos-bin.js';

// Acceptance (issue 12): examples/weather-plugin is packed as it would be published (pnpm pack: workspace ranges
// become versions) and installed into a fresh project next to the packed CLI (@libos/cli and the @libos packages it
// depends on, each packed; their third-party dependencies linked from this workspace, as a registry would supply
// them). The installed `libos` (its package.json bin) uses the plugin through --plugin: spawn, grant, activate_skill
// returning its tool, and a call of the tool. The plugin's @libos/sdk is its own copy (nested under it, as npm
// installs a second version), not the CLI's: its LibosError is recognised by the brand.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PNPM = ['-y', 'pnpm@12.4.2'];
/** The CLI and every @libos package it needs, by folder. */
const CLI_PACKAGES: Readonly<Record<string, string>> = {
  '@libos/cli': 'apps/cli',
  '@libos/server': 'apps/server',
  '@libos/client': 'packages/client',
  '@libos/mcp-client': 'packages/mcp-client',
  '@libos/kernel': 'packages/kernel',
  '@libos/capabilities': 'packages/capabilities',
  '@libos/object-memory': 'packages/object-memory',
  '@libos/tasks': 'packages/tasks',
  '@libos/session': 'packages/session',
  '@libos/workspace': 'packages/workspace',
  '@libos/checkpoints': 'packages/checkpoints',
  '@libos/sdk': 'packages/sdk',
};
let work: string;
let project: string;
/** The installed CLI's entry: node_modules/@libos/cli plus its package.json bin.libos. */
let installedBin: string;

const packed = new Map<string, string>();
/** Packs a workspace package into `work` with pnpm (once) and returns the tarball's path. */
function pack(dir: string): string {
  const known = packed.get(dir);
  if (known) return known;
  const before = new Set(readdirSync(work));
  execFileSync('npx', [...PNPM, 'pack', '--pack-destination', work], { cwd: join(ROOT, dir), stdio: 'pipe' });
  const made = readdirSync(work).filter((f) => f.endsWith('.tgz') && !before.has(f));
  if (made.length !== 1) throw new Error(`pnpm pack in ${dir} made ${made.length} tarballs`);
  packed.set(dir, join(work, made[0]!));
  return join(work, made[0]!);
}

/** Unpacks a tarball into `node_modules` (default: the project's) as `name` (what npm install does with it). */
function install(tarball: string, name: string, modules = join(project, 'node_modules')): string {
  const dest = join(modules, name);
  mkdirSync(dest, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', dest, '--strip-components=1']);
  return dest;
}

function libos(...args: string[]): Ran {
  const r = spawnSync(process.execPath, [installedBin, '--db', join(project, '.libos', 'libos.db'), ...args], {
    cwd: project,
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const ok = (...args: string[]) => {
  const r = libos('--json', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

beforeAll(() => {
  assertBuilt();
  for (const dist of ['examples/weather-plugin/dist/index.js', 'packages/sdk/dist/index.js']) {
    if (!existsSync(join(ROOT, dist))) throw new Error(`${dist} is missing: run "npm run build" (npm test builds it) before this test`);
  }
  work = mkdtempSync(join(tmpdir(), 'libos-weather-pack-'));
  project = join(work, 'project');
  mkdirSync(project);
  // The CLI, packed with its @libos packages; their own dependencies come from the registry in a real install
  // (hoisted into node_modules), here this workspace's copies, linked.
  const installed = Object.entries(CLI_PACKAGES).map(([name, dir]) => ({ dir, pkg: install(pack(dir), name) }));
  for (const { dir, pkg } of installed) {
    const deps = (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies;
    for (const dep of Object.keys(deps ?? {})) {
      const link = join(project, 'node_modules', dep);
      if (dep.startsWith('@libos/') || existsSync(link)) continue;
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(realpathSync(join(ROOT, dir, 'node_modules', dep)), link, 'dir');
    }
  }
  const cli = JSON.parse(readFileSync(join(project, 'node_modules/@libos/cli/package.json'), 'utf8')) as { bin: { libos: string } };
  installedBin = join(project, 'node_modules/@libos/cli', cli.bin.libos);
  const weather = install(pack('examples/weather-plugin'), '@acme/libos-weather');
  install(pack('packages/sdk'), '@libos/sdk', join(weather, 'node_modules'));
  const manifest = JSON.parse(readFileSync(join(weather, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(manifest.dependencies['@libos/sdk']).toMatch(/^\d+\.\d+\.\d+$/);
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('[issue 12] the packed weather plugin, loaded by libos --plugin', { timeout: 120_000 }, () => {
  it('packs with its Skill and build, and libos plugins lists it with its version', () => {
    const files = readdirSync(join(project, 'node_modules/@acme/libos-weather'), { recursive: true }).map(String);
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'skills/weather/SKILL.md',
        'dist/index.js',
        'dist/index.cjs',
        'dist/index.d.ts',
        'dist/index.d.cts',
      ]),
    );
    expect(files.some((f) => f.startsWith('src'))).toBe(false);
    const listed = ok('--plugin', '@acme/libos-weather', 'plugins') as {
      name: string;
      version: string;
      spec: string | null;
      file: string | null;
    }[];
    expect(listed.find((p) => p.name === '@acme/libos-weather')).toMatchObject({
      version: '1.0.0',
      spec: '@acme/libos-weather',
      file: join(project, 'node_modules/@acme/libos-weather/dist/index.js'),
    });
  });

  it('spawn, grant, activate_skill (returns get_weather) and call get_weather, each a separate libos command', () => {
    const P = ['--plugin', '@acme/libos-weather'];
    const pid = ok(...P, 'spawn', '--goal', 'What is the weather in Lisbon?').pid as string;
    ok(...P, 'grant', pid, 'skill:weather', 'execute');
    const activated = ok(...P, 'call', pid, 'activate_skill', '{"skill_id":"weather"}');
    expect(activated).toMatchObject({ ok: true, payload: { skill_id: 'weather', tool_names: ['get_weather'] } });
    expect(ok(...P, 'show', pid).tool_table).toContain('get_weather');

    // In the table, but the call needs weather:<city> read: refused (exit 1) until the host grants it.
    const refused = libos(...P, 'call', pid, 'get_weather', '{"city":"Lisbon"}');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    ok(...P, 'grant', pid, 'weather:lisbon', 'read');
    expect(ok(...P, 'call', pid, 'get_weather', '{"city":"Lisbon"}')).toMatchObject({
      ok: true,
      payload: { city: 'lisbon', celsius: 19, sky: 'clear' },
    });

    // The plugin's own error code, thrown by its own copy of @libos/sdk, keeps its code and category.
    ok(...P, 'grant', pid, 'weather:*', 'read');
    const unknown = libos(...P, 'call', pid, 'get_weather', '{"city":"Atlantis"}');
    expect(JSON.parse(unknown.stdout)).toMatchObject({
      ok: false,
      error: { code: 'weather_city_unknown', category: 'not_found', details: { field: 'city' } },
    });

    // Without --plugin the store refuses to open, naming the plugin and the process.
    const without = libos('ps');
    expect(without.code).toBe(1);
    expect(without.stderr).toContain(`plugin_missing: store ${realpathSync(project)}`);
    expect(without.stderr).toContain(`@acme/libos-weather 1.0.0 (needed by ${pid})`);
  });

  it('skills validate knows the kernel Skills beside the package', () => {
    const r = libos('skills', 'validate', join(project, 'node_modules/@acme/libos-weather'));
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(r.stdout).toContain('ok: 1 skill(s) valid; plugin @acme/libos-weather loads: weather');
  });
});
