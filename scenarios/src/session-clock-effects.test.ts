// The clock as an observed provider (docs/behaviour/session.md S-C8, S-C9, S-C15 to S-C19, S-C24): a reading that
// fails observed nothing and spends nothing; once a sleep's timer is committed its one-use grant stays spent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, describe, expect, it } from 'vitest';
import { failInsertsWhere } from './support/kernel-harness.js';

let rt: Runtime | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** True inside the session tools' own clock reading (`readClock`), not the kernel's row timestamps. */
const inToolReading = () => (new Error().stack ?? '').includes('readClock');

/**
 * A fake wall clock the scheduler's idle wait advances. `toolReading`, when set, answers (or throws for) the tools'
 * own readings only, so a test can break the provider the tool observes without breaking the kernel's bookkeeping.
 */
function fakeClock(start = '2026-12-01T09:00:00Z') {
  const c = {
    at: Date.parse(start),
    toolReading: undefined as undefined | (() => Date),
    now: (): Date => (c.toolReading && inToolReading() ? c.toolReading() : new Date(c.at)),
    sleep: async (ms: number) => void (c.at += ms),
  };
  return c;
}

/** A reading that throws once, then reads normally. */
const failOnce = (clock: ReturnType<typeof fakeClock>) => {
  clock.toolReading = () => {
    clock.toolReading = undefined;
    throw new Error('clock device unreadable');
  };
};

async function open(clock: ReturnType<typeof fakeClock>, path = ':memory:', idStart = 0): Promise<Runtime> {
  rt = await openRuntime({ path, plugins: [capabilities(), objectMemory(), session()], config: { clock, ids: sequentialIds(idStart) } });
  return rt;
}

/** The uses left on the pid's grant of `resource` (null: unlimited). */
async function usesLeft(r: Runtime, pid: string, resource: string): Promise<number | null> {
  const caps = await r.capabilities(pid, { includeInactive: true });
  const cap = caps.find((c) => c.resource === resource);
  if (!cap) throw new Error(`no grant on ${resource}`);
  return cap.usesRemaining;
}

describe('get_current_time: the clock read', () => {
  it(`[S-C8] [S-C24] a clock that fails the read: provider_error with effect_status not_started, and the one-use grant is still \
there`, async () => {
    const clock = fakeClock();
    const r = await open(clock);
    const p = await r.spawn({ goal: 'tell the time' });
    await r.grant(p.pid, 'clock:now', ['read'], { uses: 1 });
    failOnce(clock);
    const failed = await r.call(p.pid, 'get_current_time', {});
    expect(failed).toMatchObject({
      ok: false,
      error: { code: 'provider_error', details: { provider: 'clock', operation: 'now', effect_status: 'not_started' } },
    });
    expect(!failed.ok && failed.error.message).toContain('nothing was observed');
    expect(await usesLeft(r, p.pid, 'clock:now')).toBe(1);
    expect(await r.audit({ action: 'primitive.clock.now' })).toEqual([]);
    expect(await r.events({ type: 'external_read' })).toEqual([]);
    // The use was never spent: one good read, then the grant is gone.
    expect(await r.call(p.pid, 'get_current_time', {})).toMatchObject({ ok: true });
    expect(await usesLeft(r, p.pid, 'clock:now')).toBe(0);
    expect(await r.call(p.pid, 'get_current_time', {})).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  });

  it(`[S-C9] a failure after the read, in the same call (its event cannot be written), returns an error and leaves nothing: no audit, no \
event, the use back`, async () => {
    const clock = fakeClock();
    const r = await open(clock);
    const p = await r.spawn({ goal: 'tell the time' });
    await r.grant(p.pid, 'clock:now', ['read'], { uses: 1 });
    const heal = await failInsertsWhere(r, {
      name: 'fail_clock_event',
      table: 'events',
      column: 'type',
      value: 'external_read',
      message: 'injected event failure',
    });
    const failed = await r.call(p.pid, 'get_current_time', { timezone: 'UTC' });
    expect(failed.ok).toBe(false);
    expect(!failed.ok && failed.error.message).toContain('injected event failure');
    // The value was read but never handed out: the call rolled back whole, so nothing was disclosed or spent.
    expect(await r.audit({ action: 'primitive.clock.now' })).toEqual([]);
    expect(await r.events({ type: 'external_read' })).toEqual([]);
    expect(await usesLeft(r, p.pid, 'clock:now')).toBe(1);
    expect((await r.audit({ pid: p.pid, action: 'tool.call' })).map((a) => a.decision)).toEqual(['internal_error']);
    await heal();
    expect(await r.call(p.pid, 'get_current_time', { timezone: 'UTC' })).toMatchObject({
      ok: true,
      payload: { iso8601: '2026-12-01T09:00:00+00:00' },
    });
    expect(await r.audit({ action: 'primitive.clock.now' })).toHaveLength(1);
  });
});

describe('sleep: before and after the timer is committed', () => {
  it(`[S-C15] [S-C24] a start reading that fails: provider_error with effect_status not_started; nothing waits and the one-use grant is \
back`, async () => {
    const clock = fakeClock();
    const r = await open(clock);
    const p = await r.spawn({ goal: 'back off' });
    await r.grant(p.pid, 'clock:sleep', ['read'], { uses: 1 });
    failOnce(clock);
    const failed = await r.call(p.pid, 'sleep', { seconds: 5 });
    expect(failed).toMatchObject({
      ok: false,
      error: { code: 'provider_error', details: { operation: 'sleep.start', effect_status: 'not_started' } },
    });
    expect(await r.process(p.pid)).toMatchObject({ status: 'runnable', waitState: null });
    expect(await usesLeft(r, p.pid, 'clock:sleep')).toBe(1);
    expect(await r.call(p.pid, 'sleep', { seconds: 5 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
    expect(await usesLeft(r, p.pid, 'clock:sleep')).toBe(0);
  });

  it(`[S-C16] the start reading, the spent use and the timer wait commit together: a failure writing the wait leaves none of \
them`, async () => {
    const clock = fakeClock();
    const r = await open(clock);
    const p = await r.spawn({ goal: 'back off' });
    await r.grant(p.pid, 'clock:sleep', ['read'], { uses: 1 });
    const heal = await failInsertsWhere(r, {
      name: 'fail_timer',
      table: 'pending_actions',
      column: 'tool',
      value: 'sleep',
      message: 'injected wait failure',
    });
    const failed = await r.call(p.pid, 'sleep', { seconds: 5 });
    expect(failed.ok).toBe(false);
    expect(!failed.ok && failed.error.message).toContain('injected wait failure');
    expect(await r.process(p.pid)).toMatchObject({ status: 'runnable', waitState: null });
    expect(await usesLeft(r, p.pid, 'clock:sleep')).toBe(1);
    expect(await r.events({ pid: p.pid, type: 'tool_waiting' })).toEqual([]);
    await heal();
    expect(await r.call(p.pid, 'sleep', { seconds: 5 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
  });

  it(`[S-C17] a reopen mid-sleep keeps the timer: the saved sleep resumes once after the deadline, without spending the grant \
again`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-sleep-'));
    dirs.push(dir);
    const path = join(dir, 'store.db');
    const clock = fakeClock();
    const first = await open(clock, path);
    const p = await first.spawn({ goal: 'back off' });
    await first.grant(p.pid, 'clock:sleep', ['read'], { uses: 1 });
    expect(await first.call(p.pid, 'sleep', { seconds: 30 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
    await first.close();
    rt = undefined;
    const second = await open(clock, path, 1000);
    expect(await second.process(p.pid)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'timer' } });
    expect(await usesLeft(second, p.pid, 'clock:sleep')).toBe(0);
    const provider = new ScriptedProvider({ processes: { [p.pid]: [[{ tool: 'process_exit', args: {} }]] } });
    const report = await second.run({ provider });
    const resumed = report.results.filter((q) => q.kind === 'resumed');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.results[0]).toMatchObject({ ok: true, payload: { requested_seconds: 30 } });
    expect((resumed[0]!.results[0] as { payload: { elapsed_seconds: number } }).payload.elapsed_seconds).toBeGreaterThanOrEqual(30);
    expect(await second.audit({ action: 'primitive.clock.sleep' })).toHaveLength(1);
    // One authorization, before the reopen: the resume re-checks nothing and spends nothing.
    expect((await second.audit({ pid: p.pid, action: 'capability.authorize' })).filter((a) => a.target === 'clock:sleep')).toHaveLength(1);
    expect((await second.process(p.pid)).status).toBe('exited');
  });

  it(`[S-C18] the end reading is taken at the resume: a clock stepped back below the start gives elapsed 0, never negative, and the use \
stays spent`, async () => {
    const clock = fakeClock();
    const r = await open(clock);
    const p = await r.spawn({ goal: 'back off' });
    await r.grant(p.pid, 'clock:sleep', ['read'], { uses: 1 });
    expect(await r.call(p.pid, 'sleep', { seconds: 5 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
    // The idle wait carries the clock past the deadline; the tool's end reading then sees it set back an hour.
    clock.toolReading = () => new Date(clock.at - 3_600_000);
    const report = await r.run({ provider: new ScriptedProvider([]), maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ kind: 'resumed', executed: ['sleep'] });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: true, payload: { requested_seconds: 5, elapsed_seconds: 0 } });
    expect(await usesLeft(r, p.pid, 'clock:sleep')).toBe(0);
  });

  it('[S-C19] an abort mid-sleep (the process is terminated while it waits): the use stays spent and the sleep never resumes', async () => {
    const clock = fakeClock();
    const r = await open(clock);
    const p = await r.spawn({ goal: 'back off' });
    await r.grant(p.pid, 'clock:sleep', ['read'], { uses: 1 });
    expect(await r.call(p.pid, 'sleep', { seconds: 30 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
    expect(await usesLeft(r, p.pid, 'clock:sleep')).toBe(0);
    await r.signal(p.pid, 'terminate', 'operator abort');
    expect(await r.process(p.pid)).toMatchObject({ status: 'killed' });
    const report = await r.run({ provider: new ScriptedProvider([]) });
    expect(report.results).toEqual([]);
    expect(await usesLeft(r, p.pid, 'clock:sleep')).toBe(0);
    expect(await r.audit({ action: 'primitive.clock.sleep' })).toEqual([]);
    expect(await r.events({ pid: p.pid, type: 'tool_resumed' })).toEqual([]);
  });
});
