import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, expect, it } from 'vitest';

let rt: Runtime;
afterEach(async () => rt.close());

it(`[S-C23] a child exiting and a message arriving mid-sleep do not end it: only its timer does; the output is requested and elapsed \
only`, async () => {
  let now = Date.parse('2026-12-01T09:00:00Z');
  // The scheduler's idle wait for the timer moves this clock (once `frozen` is lifted); nothing else does.
  let frozen = true;
  const clock = { now: () => new Date(now), sleep: async (ms: number) => void (frozen ? undefined : (now += ms)) };
  rt = await openRuntime({
    path: ':memory:',
    plugins: [capabilities(), objectMemory(), session()],
    config: { clock, ids: sequentialIds() },
  });
  const parent = await rt.spawn({ goal: 'sleep while the child finishes' });
  const child = await rt.spawn({ goal: 'finish at once', parentPid: parent.pid });
  await rt.grant(parent.pid, 'clock:sleep', ['read']);
  expect(await rt.call(parent.pid, 'sleep', { seconds: 30 })).toMatchObject({ ok: true, wait: { kind: 'timer' } });
  const started = now;

  // The child exits (its exit wakes a parent waiting on it; this parent waits on its timer) and a message arrives.
  const provider = new ScriptedProvider({
    processes: { [child.pid]: [[{ tool: 'process_exit', args: { message: 'done' } }]], [parent.pid]: [] },
  });
  const first = await rt.run({ provider, maxQuanta: 1 });
  expect(first.results.map((r) => [r.pid, r.kind])).toEqual([[child.pid, 'turn']]);
  expect(await rt.process(child.pid)).toMatchObject({ status: 'exited' });
  await rt.sendMessage(parent.pid, { text: 'your child is done' });
  expect(await rt.process(parent.pid)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'timer' } });
  expect(now).toBe(started);

  // Only the clock reaching the deadline resumes the saved sleep (without a model call).
  frozen = false;
  const second = await rt.run({ provider, maxQuanta: 1 });
  expect(second.results[0]).toMatchObject({ pid: parent.pid, kind: 'resumed', executed: ['sleep'] });
  expect(now - started).toBeGreaterThanOrEqual(30_000);
  const out = (second.results[0]!.results[0] as { payload: Record<string, number> }).payload;
  expect(Object.keys(out).sort()).toEqual(['elapsed_seconds', 'requested_seconds']);
  expect(out.requested_seconds).toBe(30);
  expect(out.elapsed_seconds).toBeGreaterThanOrEqual(30);
  expect(provider.requests.filter((r) => r.pid === parent.pid)).toEqual([]);
  expect((await rt.messages(parent.pid)).map((m) => m.status)).toEqual(['unread']);
});
