import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, tempStore, writeScript } from '../testing/libos-bin.js';

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = tempStore('libos-config-').dir;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh store folder per test: `dbDir/libos.db`, its config next to it. */
function freshFolder(config?: unknown): { db: string; dbDir: string } {
  const dbDir = join(dir, `s${++n}`);
  mkdirSync(dbDir);
  if (config !== undefined) writeFileSync(join(dbDir, 'libos.config.json'), JSON.stringify(config));
  return { db: join(dbDir, 'libos.db'), dbDir };
}

/** Activates a Skill on `pid` the way a model does: `activate_skill` under a `skill:<id>` execute grant. */
function activate(json: (...args: string[]) => any, pid: string, skill: string): void {
  json('grant', pid, `skill:${skill}`, 'execute');
  json('call', pid, 'activate_skill', JSON.stringify({ skill_id: skill }));
}

const small = { provider: 'script', model: 'scripted-small', context_window: 128_000, max_tokens: 256 };

describe('libos config show', { timeout: 120_000 }, () => {
  it('prints every default when there is no config file, and does not create the store', () => {
    const { db } = freshFolder();
    const shown = libosOn(db).json('config', 'show');
    const defaults = {
      timezone: 'UTC',
      sleep: { max_seconds: 60 },
      llm_context: { policy: 'source_only' },
      llm_profiles: {},
      mcp_servers: {},
      plugins: [],
    };
    expect(shown).toEqual({ path: null, config: defaults });
    expect(existsSync(db)).toBe(false);
    const text = libosOn(db).run('config', 'show');
    expect(text.stdout.split('\n')[0]).toBe('# no config file: every default');
  });

  it('prints the effective config of the file next to the store, defaults filled in', () => {
    const { db, dbDir } = freshFolder({ timezone: 'Asia/Shanghai', llm_profiles: { small }, default_profile: 'small' });
    const shown = libosOn(db).json('config', 'show');
    expect(shown.path).toBe(join(dbDir, 'libos.config.json'));
    expect(shown.config).toEqual({
      timezone: 'Asia/Shanghai',
      sleep: { max_seconds: 60 },
      llm_context: { policy: 'source_only' },
      llm_profiles: { small: { ...small, parallel_tool_calls: false } },
      default_profile: 'small',
      mcp_servers: {},
      plugins: [],
    });
  });

  it('--config <path> wins over the file next to the store (YAML too)', () => {
    const { db } = freshFolder({ timezone: 'Asia/Shanghai' });
    const yaml = writeScript(dir, 'host.yaml', 'sleep:\n  max_seconds: 5\n');
    const shown = libosOn(db).json('--config', yaml, 'config', 'show');
    expect(shown).toMatchObject({ path: yaml, config: { timezone: 'UTC', sleep: { max_seconds: 5 } } });
  });
});

describe('a bad host config fails every command with the key named; nothing is written', { timeout: 120_000 }, () => {
  const bad: readonly [string, unknown, string][] = [
    ['an unknown key', { timezone: 'UTC', tools: {} }, 'tools: unknown key'],
    [
      'a negative window',
      { llm_profiles: { small: { ...small, context_window: -1 } } },
      'llm_profiles.small.context_window: must be a positive integer',
    ],
    ['a timezone that is not IANA', { timezone: 'Mars/Olympus' }, 'timezone: must be an IANA timezone name'],
  ];
  for (const [what, config, named] of bad) {
    it(`${what}, given with --config: init fails (exit 1, invalid_arguments) and creates no store`, () => {
      const { db } = freshFolder();
      const file = join(dir, `bad${n}.json`);
      writeFileSync(file, JSON.stringify(config));
      expectRefused(libosOn(db).run('--config', file, 'init'), 1, `invalid_arguments: host config ${file}: ${named}`);
      expect(existsSync(db)).toBe(false);
    });

    it(`${what}, next to an existing store: ps and serve fail naming the key; the store file is unchanged`, () => {
      const { db, dbDir } = freshFolder();
      const ok = libosOn(db);
      ok.json('spawn', '--goal', 'exist');
      const digest = () => createHash('sha256').update(readFileSync(db)).digest('hex');
      const before = digest();
      const file = join(dbDir, 'libos.config.json');
      writeFileSync(file, JSON.stringify(config));
      expectRefused(ok.run('ps'), 1, `host config ${file}: ${named}`);
      expectRefused(ok.run('serve'), 1, `host config ${file}: ${named}`);
      expect(digest()).toBe(before);
    });
  }
});

const BATCH = `processes:
  "*":
    - - tool: create_memory_object
        args: { type: observation, name: dropped, payload: { n: 1 } }
      - tool: process_exit
        args: { message: done }
`;

describe('libos run with an LLM profile', { timeout: 120_000 }, () => {
  it('[S-B1] the default profile (parallel_tool_calls false) runs only the last call of a reply', () => {
    const { db } = freshFolder({ llm_profiles: { small }, default_profile: 'small' });
    const { run, json } = libosOn(db);
    const pid = json('spawn', '--goal', 'note, then exit').pid;
    activate(json, pid, 'agent-libos-object-memory');
    const report = json('run', '--script', writeScript(dir, 'batch.yaml', BATCH));
    expect(report).toMatchObject({ profile: 'small', model: 'scripted-small', statuses: { exited: 1 } });
    expect(report.log[0]).toMatchObject({ executed: ['process_exit'], skipped: ['create_memory_object'] });
    const text = run('run', '--script', writeScript(dir, 'batch.yaml', BATCH));
    expect(text.stdout).toContain('profile: small (scripted scripted-small, parallel tool calls off)');
  });

  it('--provider given explicitly runs without the default profile; --profile names one; an unknown name is a usage error', () => {
    const { db } = freshFolder({ llm_profiles: { small, many: { ...small, parallel_tool_calls: true } }, default_profile: 'small' });
    const { run, json } = libosOn(db);
    const a = json('spawn', '--goal', 'a').pid;
    activate(json, a, 'agent-libos-object-memory');
    const script = writeScript(dir, 'batch.yaml', BATCH);
    const plain = json('run', '--provider', 'scripted', '--script', script, '--pid', a);
    expect(plain).toMatchObject({ profile: null });
    expect(plain.log[0]).toMatchObject({ executed: ['create_memory_object', 'process_exit'] });
    const b = json('spawn', '--goal', 'b').pid;
    activate(json, b, 'agent-libos-object-memory');
    const many = run('run', '--profile', 'many', '--script', script, '--pid', b);
    expect(many.code, many.stderr).toBe(0);
    expect(many.stdout).toContain('profile: many (scripted scripted-small, parallel tool calls on)');
    expectRefused(run('run', '--profile', 'huge', '--script', script), 2, 'no llm profile named "huge" (configured: small, many)');
    expectRefused(run('run', '--profile', 'small', '--provider', 'openai'), 2, '--provider openai contradicts profile small');
  });
});

describe('human_output reaches libos events', { timeout: 120_000 }, () => {
  it('a process with human:owner write sends a message; libos events --type human_output shows its text', () => {
    const { db } = freshFolder();
    const { json } = libosOn(db);
    const pid = json('spawn', '--goal', 'report').pid;
    activate(json, pid, 'agent-libos-human-output');
    json('grant', pid, 'human:owner', 'write');
    json('call', pid, 'human_output', '{"message":"All 12 checks passed."}');
    const events = json('events', '--type', 'human_output');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ pid, type: 'human_output', data: { human: 'owner', kind: 'info', text: 'All 12 checks passed.' } });
  });
});
