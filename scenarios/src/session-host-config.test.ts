import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type HostConfigInput, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { LibosError } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, describe, expect, it } from 'vitest';

// The host config reaches the session tools: the timezone default and the sleep maximum are in the schemas the model
// sees and in what the tools accept; a bad config fails the open with the key named and the store untouched.

let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

const now = Date.parse('2026-11-30T12:00:00Z');
const plugins = (opts: Parameters<typeof session>[0] = {}) => [capabilities(), objectMemory(), session(opts)];

async function open(hostConfig: HostConfigInput, sessionOpts: Parameters<typeof session>[0] = {}) {
  rt = await openRuntime({ path: ':memory:', plugins: plugins(sessionOpts), hostConfig, config: { clock: { now: () => new Date(now) } } });
  const p = await rt.spawn({ goal: 'keep time' });
  return { rt, pid: p.pid };
}

/** The JSON Schema of one argument of `tool`, as `pid`'s model is shown it. */
async function argSchema(r: Runtime, pid: string, tool: string, arg: string): Promise<Record<string, unknown>> {
  const schemas = await r.toolSchemas(pid);
  const schema = schemas.find((t) => t.name === tool)!.inputSchema as { properties: Record<string, Record<string, unknown>> };
  return schema.properties[arg]!;
}

describe('the session tools follow the host config', () => {
  it('[S-C2] [S-C21] timezone Asia/Shanghai: the live schema shows it as the default; omitted, it is echoed with +08:00', async () => {
    const { rt: r, pid } = await open({ timezone: 'Asia/Shanghai' });
    expect(await argSchema(r, pid, 'get_current_time', 'timezone')).toMatchObject({ default: 'Asia/Shanghai' });
    await r.grant(pid, 'clock:now', ['read']);
    const shanghai = { timezone: 'Asia/Shanghai', iso8601: '2026-11-30T20:00:00+08:00' };
    expect(await r.call(pid, 'get_current_time', {})).toMatchObject({ ok: true, payload: shanghai });
    // An explicit zone still wins over the default.
    const utc = { iso8601: '2026-11-30T12:00:00+00:00' };
    expect(await r.call(pid, 'get_current_time', { timezone: 'UTC' })).toMatchObject({ ok: true, payload: utc });
  });

  it('[S-C13] sleep max 5 configured: the schema maximum is 5 and 6 seconds is invalid_arguments, before any authority check', async () => {
    const { rt: r, pid } = await open({ sleep: { max_seconds: 5 } });
    await r.activateSkill(pid, 'agent-libos-runtime-session');
    expect(await argSchema(r, pid, 'sleep', 'seconds')).toMatchObject({ minimum: 0, maximum: 5 });
    expect(await r.call(pid, 'sleep', { seconds: 6 })).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(await r.audit({ pid, action: 'capability.authorize' })).toEqual([]);
    await r.grant(pid, 'clock:sleep', ['read']);
    expect(await r.call(pid, 'sleep', { seconds: 5 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
  });

  it("the session plugin's own options win over the host config", async () => {
    const host = { timezone: 'Asia/Shanghai', sleep: { max_seconds: 5 } };
    const { rt: r, pid } = await open(host, { timezone: 'Europe/Paris', maxSleepSeconds: 3 });
    await r.activateSkill(pid, 'agent-libos-runtime-session');
    expect(await argSchema(r, pid, 'get_current_time', 'timezone')).toMatchObject({ default: 'Europe/Paris' });
    expect(await argSchema(r, pid, 'sleep', 'seconds')).toMatchObject({ maximum: 3 });
    expect(r.hostConfig).toMatchObject({ timezone: 'Asia/Shanghai', sleep: { max_seconds: 5 } });
  });

  it('without a host config the defaults hold: UTC and 60 seconds', async () => {
    const { rt: r, pid } = await open({});
    await r.activateSkill(pid, 'agent-libos-runtime-session');
    expect(await argSchema(r, pid, 'get_current_time', 'timezone')).toMatchObject({ default: 'UTC' });
    expect(await argSchema(r, pid, 'sleep', 'seconds')).toMatchObject({ maximum: 60 });
  });
});

describe('a bad host config fails the open with the key named, and nothing is written', () => {
  const profile = { provider: 'openai', model: 'gpt-4o-mini', context_window: 4000, max_tokens: 512 };
  const cases: readonly [string, Record<string, unknown>, string][] = [
    ['an unknown key', { timezone: 'UTC', sleep_max: 5 }, 'sleep_max: unknown key'],
    [
      'a negative window',
      { llm_profiles: { fast: { ...profile, context_window: -4000 } } },
      'llm_profiles.fast.context_window: must be a positive integer',
    ],
    ['a timezone that is not IANA', { timezone: 'Mars/Olympus' }, 'timezone: must be an IANA timezone name'],
  ];

  async function openFails(opts: Parameters<typeof openRuntime>[0]): Promise<LibosError> {
    try {
      rt = await openRuntime(opts);
    } catch (err) {
      expect(err).toBeInstanceOf(LibosError);
      return err as LibosError;
    }
    throw new Error('the runtime opened with a bad config');
  }

  for (const [what, config, named] of cases) {
    it(`${what}, given to openRuntime: invalid_arguments naming ${named.split(':')[0]}; no store file`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'libos-badcfg-'));
      const db = join(dir, 'libos.db');
      const e = await openFails({ path: db, plugins: plugins(), hostConfig: config as HostConfigInput });
      expect(e.code).toBe('invalid_arguments');
      expect(e.message).toContain(named);
      expect(existsSync(db)).toBe(false);
    });

    it(`${what}, in libos.config.json next to the store: the file and key are named; an existing store is unchanged`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'libos-badcfg-'));
      const db = join(dir, 'libos.db');
      const first = await openRuntime({ path: db, plugins: plugins() });
      await first.spawn({ goal: 'exist' });
      await first.close();
      const digest = () => createHash('sha256').update(readFileSync(db)).digest('hex');
      const before = digest();
      const file = join(dir, 'libos.config.json');
      writeFileSync(file, JSON.stringify(config));
      const e = await openFails({ path: db, plugins: plugins() });
      expect(e.code).toBe('invalid_arguments');
      expect(e.message).toContain(`host config ${file}: ${named}`);
      expect(digest()).toBe(before);
      expect(existsSync(`${db}-wal`) ? readFileSync(`${db}-wal`).length : 0).toBe(0);
    });
  }

  it('a good libos.config.yaml next to the store is the effective config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-cfg-'));
    writeFileSync(join(dir, 'libos.config.yaml'), 'timezone: Asia/Shanghai\nllm_context:\n  policy: llm_context_object\n');
    rt = await openRuntime({ path: join(dir, 'libos.db'), plugins: plugins() });
    expect(rt.hostConfigPath).toBe(join(dir, 'libos.config.yaml'));
    const effective = { timezone: 'Asia/Shanghai', llm_context: { policy: 'llm_context_object' }, sleep: { max_seconds: 60 } };
    expect(rt.hostConfig).toMatchObject(effective);
  });
});
