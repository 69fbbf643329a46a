// Packaging (issue 12): what `npm install @libos/<pkg>` gives a user. Every public package, packed as it would be
// published (pnpm pack), passes publint and @arethetypeswrong/cli; its declarations compile with tsc (no skipLibCheck)
// from a consumer under moduleResolution node16, nodenext and bundler, as ESM and as CommonJS; every package.json
// states engines.node, and no installed package asks for a newer Node than that (no EBADENGINE on Node 20.19).
// The packages are built by `npm test` first; run `npm run build` before running this file alone.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(v: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface Manifest {
  name: string;
  private?: boolean;
  engines?: { node?: string };
  exports?: Record<string, unknown>;
}
const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest;

/** Every workspace package folder (pnpm-workspace.yaml's globs, expanded). */
const WORKSPACE = ['packages', 'apps', 'examples']
  .flatMap((group) => readdirSync(join(ROOT, group)).map((d) => `${group}/${d}`))
  .filter((d) => existsSync(join(ROOT, d, 'package.json')))
  .concat(['scenarios', 'bench']);
/** The packages a user installs from the registry. */
const PUBLIC = WORKSPACE.filter((d) => !manifest(d).private);
/** Those that ship CommonJS too (a `require` condition); the others are ESM-only, which their exports say. */
const DUAL = PUBLIC.filter((d) => typeof manifest(d).exports?.['.'] === 'object' && 'require' in (manifest(d).exports!['.'] as object));
/** The Node this repository supports (root package.json), e.g. `>=20.19`. */
const NODE_RANGE = manifest('.').engines!.node!;
const OLDEST_NODE = semver.minVersion(NODE_RANGE)!.version;

let work: string;
const tarballs = new Map<string, string>();

beforeAll(() => {
  for (const d of PUBLIC) if (!existsSync(join(ROOT, d, 'dist'))) throw new Error(`${d}/dist is missing: run "npm run build" first`);
  work = mkdtempSync(join(tmpdir(), 'libos-packaging-'));
  for (const d of PUBLIC) {
    const out = join(work, 'tarballs', d.replace('/', '-'));
    mkdirSync(out, { recursive: true });
    execFileSync('npx', ['-y', 'pnpm@12.4.2', 'pack', '--pack-destination', out], { cwd: join(ROOT, d), stdio: 'pipe' });
    const [file] = readdirSync(out);
    tarballs.set(d, join(out, file!));
  }
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('engines', () => {
  it('every package.json states engines.node, the same range as the repository', () => {
    expect(WORKSPACE.filter((d) => manifest(d).engines?.node !== NODE_RANGE)).toEqual([]);
  });

  it(`no locked package needs a Node newer than ${OLDEST_NODE} (what pnpm or npm would warn about: EBADENGINE)`, () => {
    // The lockfile's packages section records each package's engines: `  name@1.2.3:` then `    engines: {node: '>=20'}`.
    const lock = readFileSync(join(ROOT, 'pnpm-lock.yaml'), 'utf8');
    const section = lock.slice(lock.indexOf('\npackages:\n'), lock.indexOf('\nsnapshots:\n'));
    const unmet: string[] = [];
    let current = '';
    for (const line of section.split('\n')) {
      const head = /^ {2}'?([^'\s][^']*?)'?:$/.exec(line);
      if (head) current = head[1]!;
      const engines = /^ {4}engines: \{.*node: '?([^',}]+)'?/.exec(line);
      if (engines && !semver.satisfies(OLDEST_NODE, engines[1]!)) unmet.push(`${current} wants node ${engines[1]}`);
    }
    expect(section.length).toBeGreaterThan(1000);
    expect(unmet).toEqual([]);
  });
});

describe('published packages', { timeout: 300_000 }, () => {
  it('pass publint (as packed)', async () => {
    const problems: string[] = [];
    for (const d of PUBLIC) {
      const tarball = readFileSync(tarballs.get(d)!);
      const { messages, pkg } = await publint({
        level: 'warning',
        pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
      });
      for (const m of messages) problems.push(`${d}: ${m.type}: ${formatMessage(m, pkg) ?? m.code}`);
    }
    expect(problems).toEqual([]);
  });

  it('pass @arethetypeswrong/cli under node16 (CommonJS and ESM) and bundler resolution (ESM-only packages: ESM)', () => {
    const attw = join(ROOT, 'node_modules/.bin/attw');
    const failures: string[] = [];
    for (const d of PUBLIC) {
      const profile = DUAL.includes(d) ? 'node16' : 'esm-only';
      const r = spawnSync(attw, [tarballs.get(d)!, '--profile', profile, '--format', 'table-flipped', '--no-color'], { encoding: 'utf8' });
      if (r.status !== 0) failures.push(`${d} (exit ${r.status}):\n${r.stdout}${r.stderr}`);
    }
    expect(failures.join('\n')).toBe('');
  });
});

/** A consumer project importing every public package, compiled by tsc in one module mode. */
function consumer(mode: { name: string; module: string; resolution: string; type: 'module' | 'commonjs' }): {
  code: number | null;
  out: string;
} {
  const dir = join(work, `consumer-${mode.name}`);
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  for (const d of PUBLIC) {
    // The package as installed: the files of its tarball, and its dependencies (this workspace's copies of them).
    const dest = join(dir, 'node_modules', manifest(d).name);
    mkdirSync(dest, { recursive: true });
    execFileSync('tar', ['-xzf', tarballs.get(d)!, '-C', dest, '--strip-components=1']);
    symlinkSync(join(ROOT, d, 'node_modules'), join(dest, 'node_modules'), 'dir');
  }
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${mode.name}`, private: true, type: mode.type }));
  // A CommonJS consumer imports the packages that ship CommonJS; an ESM one imports every package.
  const imported = mode.type === 'commonjs' ? DUAL : PUBLIC;
  const lines = imported.map((d, i) => `import * as p${i} from '${manifest(d).name}';`);
  lines.push(`export const loaded = [${imported.map((_, i) => `p${i}`).join(', ')}];`);
  lines.unshift("import type { OpenRuntimeOptions } from '@libos/kernel';", "import type { Plugin } from '@libos/sdk';");
  lines.push('export type Used = [OpenRuntimeOptions, Plugin];');
  writeFileSync(join(dir, 'index.ts'), `${lines.join('\n')}\n`);
  const compilerOptions = {
    module: mode.module,
    moduleResolution: mode.resolution,
    target: 'ES2022',
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ['node'],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['index.ts'] }));
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('declarations compile in a consumer (tsc, no skipLibCheck)', { timeout: 300_000 }, () => {
  const modes = [
    { name: 'node16-esm', module: 'node16', resolution: 'node16', type: 'module' },
    { name: 'node16-cjs', module: 'node16', resolution: 'node16', type: 'commonjs' },
    { name: 'nodenext-esm', module: 'nodenext', resolution: 'nodenext', type: 'module' },
    { name: 'nodenext-cjs', module: 'nodenext', resolution: 'nodenext', type: 'commonjs' },
    { name: 'bundler', module: 'esnext', resolution: 'bundler', type: 'module' },
  ] as const;
  for (const mode of modes) {
    it(`moduleResolution ${mode.resolution}, ${mode.type === 'module' ? 'ESM' : 'CommonJS'} (${mode.name})`, () => {
      const r = consumer(mode);
      expect(r.out).toBe('');
      expect(r.code).toBe(0);
    });
  }
});
