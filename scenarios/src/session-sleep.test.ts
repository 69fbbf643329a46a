import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, expect, it } from 'vitest';

let rt: Runtime;
let now = Date.parse('2026-11-30T12:00:00Z');
afterEach(async () => rt.close());

async function open() {
  rt = await openRuntime({
    path: ':memory:',
    plugins: [capabilities(), objectMemory(), session()],
    config: { clock: { now: () => new Date(now) } },
  });
}

it('[K-26] sleep(5) parks P1 in a timer wait; P2 progresses meanwhile; P1 resumes without a model call when the clock passes', async () => {
  // A fake clock: the scheduler's idle wait for a timer advances it instead of sleeping for real.
  rt = await openRuntime({
    path: ':memory:',
    plugins: [capabilities(), objectMemory(), session()],
    // Sequential ids keep the two processes in spawn order (both are created at the same fake instant).
    config: { clock: { now: () => new Date(now), sleep: async (ms) => void (now += ms) }, ids: sequentialIds() },
  });
  const p1 = await rt.spawn({ goal: 'back off' });
  const p2 = await rt.spawn({ goal: 'keep working' });
  await rt.grant(p1.pid, 'clock:sleep', ['read']);
  await rt.grant(p2.pid, 'skill:*', ['read']);
  const provider = new ScriptedProvider({
    processes: {
      [p1.pid]: [[{ tool: 'sleep', args: { seconds: 5 } }], [{ tool: 'process_exit', args: { message: 'slept' } }]],
      [p2.pid]: [[{ tool: 'discover_skills', args: {} }], [{ tool: 'discover_skills', args: {} }], [{ tool: 'process_exit', args: {} }]],
    },
  });
  const started = now;
  const report = await rt.run({ provider });
  expect(report.idle).toBe(true);
  const order = report.results.map((r) => `${r.pid === p1.pid ? 'P1' : 'P2'}:${r.kind}:${r.executed.join(',')}`);
  // P2 runs all its turns while P1 sleeps; P1's saved sleep resumes only after the clock passed its deadline.
  expect(order).toEqual([
    'P1:turn:sleep',
    'P2:turn:discover_skills',
    'P2:turn:discover_skills',
    'P2:turn:process_exit',
    'P1:resumed:sleep',
    'P1:turn:process_exit',
  ]);
  const resumed = report.results.find((r) => r.pid === p1.pid && r.kind === 'resumed')!;
  expect(resumed.results[0]).toMatchObject({ ok: true, payload: { requested_seconds: 5 } });
  expect((resumed.results[0] as { payload: { elapsed_seconds: number } }).payload.elapsed_seconds).toBeGreaterThanOrEqual(5);
  expect(now - started).toBeGreaterThanOrEqual(5_000);
  expect(provider.calls).toBe(5); // the resumed sleep asked no model
  expect((await rt.process(p1.pid)).status).toBe('exited');
});

it('with a clock that does not advance, the run ends idle and the sleeper keeps waiting', async () => {
  await open();
  const p = await rt.spawn({ goal: 'nap' });
  await rt.activateSkill(p.pid, 'agent-libos-runtime-session');
  await rt.grant(p.pid, 'clock:sleep', ['read']);
  expect(await rt.call(p.pid, 'sleep', { seconds: 0.01 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
  const report = await rt.run({ provider: new ScriptedProvider([]) });
  expect(report).toMatchObject({ idle: true, quanta: 0 });
  expect((await rt.process(p.pid)).waitState).toMatchObject({ kind: 'timer' });
});

it('a turn that calls sleep stops as waiting_timer, in its QuantumResult and in its llm.action_batch audit', async () => {
  await open(); // the clock never advances: the sleeper stays parked
  const p = await rt.spawn({ goal: 'nap' });
  await rt.grant(p.pid, 'clock:sleep', ['read']);
  const report = await rt.run({ provider: new ScriptedProvider([[{ tool: 'sleep', args: { seconds: 5 } }]]), maxQuanta: 1 });
  expect(report.results[0]).toMatchObject({ pid: p.pid, kind: 'turn', stopReason: 'waiting_timer', executed: ['sleep'] });
  const batches = await rt.audit({ pid: p.pid, action: 'llm.action_batch' });
  expect(batches.map((a) => [a.decision, a.details.stop_reason])).toEqual([['waiting_timer', 'waiting_timer']]);
  expect((await rt.process(p.pid)).waitState).toMatchObject({ kind: 'timer' });
});

it('[S-C10] a real short sleep: the scheduler waits for the timer and the measured elapsed time is reported', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), session()] });
  const p = await rt.spawn({ goal: 'nap' });
  await rt.grant(p.pid, 'clock:sleep', ['read']);
  const provider = new ScriptedProvider([[{ tool: 'sleep', args: { seconds: 0.05 } }]]);
  const report = await rt.run({ provider });
  const resumed = report.results.find((r) => r.kind === 'resumed')!;
  const out = (resumed.results[0] as { payload: { requested_seconds: number; elapsed_seconds: number } }).payload;
  expect(out.requested_seconds).toBe(0.05);
  expect(out.elapsed_seconds).toBeGreaterThanOrEqual(0.05);
});

it(`[S-C11] [S-C14] out-of-range seconds are invalid_arguments; without clock:sleep it is permission_denied and nothing \
waits`, async () => {
  await open();
  const p = await rt.spawn({ goal: 'nap' });
  await rt.activateSkill(p.pid, 'agent-libos-runtime-session');
  for (const seconds of [61, -1])
    expect(await rt.call(p.pid, 'sleep', { seconds })).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  const denied = await rt.call(p.pid, 'sleep', { seconds: 1 });
  expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  expect(!denied.ok && denied.error.message).toContain('clock:sleep');
  expect((await rt.process(p.pid)).status).toBe('runnable');
  await rt.grant(p.pid, 'clock:sleep', ['read'], { uses: 1 });
  expect(await rt.call(p.pid, 'sleep', { seconds: 0 })).toMatchObject({ ok: true, payload: { requested_seconds: 0, elapsed_seconds: 0 } });
  expect(await rt.call(p.pid, 'sleep', { seconds: 0 })).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
});

it('[S-C23] a message arriving mid-sleep does not end it early and stays unread', async () => {
  await open();
  const p = await rt.spawn({ goal: 'nap' });
  await rt.activateSkill(p.pid, 'agent-libos-runtime-session');
  await rt.grant(p.pid, 'clock:sleep', ['read']);
  expect(await rt.call(p.pid, 'sleep', { seconds: 10 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
  await rt.sendMessage(p.pid, { text: 'wake up' }, { from: 'human:owner' });
  expect((await rt.process(p.pid)).status).toBe('waiting_event');
  expect((await rt.messages(p.pid)).map((m) => m.status)).toEqual(['unread']);
});
