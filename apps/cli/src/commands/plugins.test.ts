import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, expectRefused, type Ran } from '../testing/libos-bin.js';

// --plugin on every command, the config's plugins key, `libos plugins`, and a store that needs a plugin the command
// did not load. The plugin is a module in a project folder that imports @libos/sdk from its own node_modules.

const SDK = fileURLToPath(new URL('../../../../packages/sdk', import.meta.url));
let project: string;

/** Runs the built CLI in the project folder (so relative --plugin specs resolve from it). */
function libos(...args: string[]): Ran {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: project, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
function json(...args: string[]) {
  const r = libos('--json', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}
function write(rel: string, text: string): string {
  const path = join(project, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const TALLY = `
import { definePlugin, defineTool, LibosError, skillFromText, z } from '@libos/sdk';
const md = '---\\nname: tally\\ndescription: Count things (CLI test plugin).\\nallowed-tools: tally_add\\n---\\nCount.\\n';
let count = 0;
export default () => definePlugin({
  name: 'cli-test-tally', version: '3.2.1', skills: [skillFromText(md, 'tally')],
  errorCodes: { tally_too_big: 'resource_exhausted' },
  tools: [defineTool({
    name: 'tally_add', description: 'Add to a counter.', input: z.object({ by: z.number().int() }),
    async run({ by }, ctx) {
      await ctx.authority.require('tally:main', 'write');
      if (by > 10) throw new LibosError('tally_too_big', 'by: at most 10 at a time', { details: { field: 'by' } });
      count += by;
      return { count };
    },
  })],
});
`;

beforeAll(() => {
  assertBuilt();
  project = mkdtempSync(join(tmpdir(), 'libos-cli-plugins-'));
  mkdirSync(join(project, 'node_modules', '@libos'), { recursive: true });
  symlinkSync(SDK, join(project, 'node_modules', '@libos', 'sdk'), 'dir');
  write('plugins/tally.mjs', TALLY);
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('libos --plugin and the plugins key', { timeout: 120_000 }, () => {
  it('[K-58] --version prints the package version', () => {
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) expect(libos(flag)).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('[K-55] libos plugins lists what a command loads, with versions; --plugin adds one from the working folder', () => {
    const plain = json('plugins') as { name: string; version: string; origin: string }[];
    expect(plain.map((p) => p.name)).toEqual(
      expect.arrayContaining(['@libos/kernel:skill-navigation', '@libos/object-memory', '@libos/session']),
    );
    expect(plain.every((p) => p.version.length > 0)).toBe(true);
    const withTally = json('--plugin', './plugins/tally.mjs', 'plugins') as {
      name: string;
      version: string;
      origin: string;
      spec: string | null;
      skills: string[];
    }[];
    expect(withTally.at(-1)).toMatchObject({
      name: 'cli-test-tally',
      version: '3.2.1',
      origin: 'spec',
      spec: './plugins/tally.mjs',
      skills: ['tally'],
    });
    const text = libos('--plugin', './plugins/tally.mjs', 'plugins');
    expect(text.stdout).toMatch(/cli-test-tally\s+3\.2\.1\s+spec\s+\.\/plugins\/tally\.mjs\s+tally\s+1/);
    // An unknown spec is one line naming it (exit 1), before anything is opened.
    expectRefused(libos('--plugin', './plugins/nope.mjs', 'plugins'), 1, 'not_found: plugin ./plugins/nope.mjs: no such file');
  });

  it('[K-56] spawn, grant and call with --plugin: activate_skill returns the tool; the plugin error code reaches the envelope', () => {
    const db = join(project, 'a', 'libos.db');
    const P = ['--db', db, '--plugin', './plugins/tally.mjs'];
    const pid = json(...P, 'spawn', '--goal', 'count').pid as string;
    json(...P, 'grant', pid, 'skill:tally', 'execute');
    const activated = JSON.parse(libos(...P, 'call', pid, 'activate_skill', '{"skill_id":"tally"}').stdout);
    expect(activated).toMatchObject({ ok: true, payload: { tool_names: ['tally_add'] } });
    const denied = libos(...P, 'call', pid, 'tally_add', '{"by":1}');
    expect(denied.code).toBe(1);
    expect(JSON.parse(denied.stdout)).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    json(...P, 'grant', pid, 'tally:main', 'write');
    expect(JSON.parse(libos(...P, 'call', pid, 'tally_add', '{"by":2}').stdout)).toMatchObject({ ok: true, payload: { count: 2 } });
    const big = libos(...P, 'call', pid, 'tally_add', '{"by":11}');
    expect(JSON.parse(big.stdout)).toMatchObject({ ok: false, error: { code: 'tally_too_big', category: 'resource_exhausted' } });

    // Without the plugin the store refuses to open, naming the plugin and the process; nothing is marked failed.
    const missing = libos('--db', db, 'ps');
    expectRefused(
      missing,
      1,
      `plugin_missing: store ${db} needs a plugin this runtime did not load: cli-test-tally 3.2.1 (needed by ${pid})`,
    );
    expect(json(...P, 'show', pid)).toMatchObject({ pid, status: 'runnable' });
  });

  it("the config's plugins key loads a plugin for every command, resolved from the config file's folder", () => {
    const db = join(project, 'b', 'libos.db');
    write('b/libos.config.json', JSON.stringify({ plugins: ['../plugins/tally.mjs'] }));
    const pid = json('--db', db, 'spawn', '--goal', 'count').pid as string;
    expect(json('--db', db, 'skills').map((s: { skill_id: string }) => s.skill_id)).toContain('tally');
    expect(json('--db', db, 'plugins').map((p: { name: string }) => p.name)).toContain('cli-test-tally');
    // --config elsewhere: its own folder is the base.
    write('c/conf/host.json', JSON.stringify({ plugins: ['../../plugins/tally.mjs'] }));
    expect(json('--db', db, '--config', 'c/conf/host.json', 'show', pid)).toMatchObject({ pid });
    const bad = write('c/conf/bad.json', JSON.stringify({ plugins: 'tally' }));
    expectRefused(libos('--db', db, '--config', bad, 'ps'), 1, 'plugins: must be a list of package names or paths');
  });
});

describe('libos skills validate', { timeout: 120_000 }, () => {
  it("knows the kernel's own Skills: an image naming agent-libos-skill-navigation validates", () => {
    const md = '---\nname: counter\ndescription: Count (validate test).\nallowed-tools: counter_add\n---\nCount.\n';
    write('pkg/skills/counter/SKILL.md', md);
    write('pkg/package.json', JSON.stringify({ name: 'cli-test-counter', version: '1.0.0', type: 'module', main: './index.mjs' }));
    write(
      'pkg/index.mjs',
      `import { readFileSync } from 'node:fs';
import { definePlugin, defineTool, skillFromText, z } from '@libos/sdk';
const md = readFileSync(new URL('./skills/counter/SKILL.md', import.meta.url), 'utf8');
export default definePlugin({
  name: 'cli-test-counter', version: '1.0.0', skills: [skillFromText(md, 'counter')],
  tools: [defineTool({ name: 'counter_add', description: 'Add.', input: z.object({}), async run() { return {}; } })],
  images: [{ id: 'counter-agent:v0', description: 'Counts.', systemPrompt: 'Count.', promptMode: 'libos_default',
    defaultSkills: ['agent-libos-skill-navigation', 'counter'], defaultTools: ['discover_skills', 'activate_skill', 'counter_add'] }],
});
`,
    );
    const r = libos('skills', 'validate', join(project, 'pkg'));
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(r.stdout).toContain('ok: 1 skill(s) valid; plugin cli-test-counter loads: counter');
  });
});

describe('a store that does not exist', { timeout: 120_000 }, () => {
  it('[K-58] read commands refuse it with store_not_found and create nothing', () => {
    const db = join(project, 'typo', 'libos.db');
    const reads = [
      ['ps'],
      ['show', 'pid_x'],
      ['caps', 'pid_x'],
      ['audit'],
      ['events'],
      ['llm-calls'],
      ['objects'],
      ['human', 'list'],
      ['skills'],
      ['call', 'pid_x', 'discover_skills'],
      ['grant', 'pid_x', 'skill:x', 'execute'],
      ['revoke', 'cap_x'],
      ['send', 'pid_x', 'hi'],
    ];
    for (const args of reads) expectRefused(libos('--db', db, ...args), 1, `store_not_found: --db ${db}: no store at ${db}`);
    expect(existsSync(join(project, 'typo'))).toBe(false);
    // init creates it; then they work.
    expect(json('--db', db, 'init')).toMatchObject({ db });
    expect(json('--db', db, 'ps')).toEqual([]);
  });
});
