import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { rowToProcess } from './process-record.js';
import type { Outcome, WaitState } from './process-state.js';
import { transition } from './transition.js';
import { waitsForChild, wakeIfWaiting } from './wake.js';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
});
afterEach(async () => rt.close());

const now = () => new Date().toISOString();
const move = (pid: string, spec: Parameters<typeof transition>[2]) => rt.transaction((scope) => transition(scope.store, pid, spec, now()));
const wake = (pid: string, child: string) =>
  rt.transaction((scope) => wakeIfWaiting(scope, pid, waitsForChild(child), `child ${child} ended`));
const childWait = (child: string): WaitState => ({ kind: 'child', child_pid: child });

describe('transition', () => {
  it('[K-14] every transition adds exactly one to stateGeneration and to the revision', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    expect(p.stateGeneration).toBe(1);
    const path: { to: Parameters<typeof transition>[2]['to']; wait?: WaitState; outcome?: Outcome }[] = [
      { to: 'running' },
      { to: 'runnable' },
      { to: 'waiting_event', wait: childWait('pid_00000000000000aa') },
      { to: 'runnable' },
      { to: 'paused', wait: { kind: 'paused' } },
      { to: 'runnable' },
      { to: 'exited', outcome: { kind: 'exited', result_oid: null } },
    ];
    let prev = p;
    for (const step of path) {
      const next = await move(p.pid, step);
      expect(next.status).toBe(step.to);
      expect(next.stateGeneration).toBe(prev.stateGeneration + 1);
      expect(next.revision).toBe(prev.revision + 1);
      prev = next;
    }
  });

  it('[K-14] the record a transition returns (kept in the store memo) is the row the store then holds', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    const stored = (pid: string) =>
      rt.transaction(async (scope) =>
        rowToProcess(await scope.store.selectFrom('processes').selectAll().where('pid', '=', pid).executeTakeFirstOrThrow()),
      );
    for (const step of [{ to: 'running' }, { to: 'runnable' }, { to: 'paused', wait: { kind: 'paused' } }, { to: 'runnable' }] as const) {
      const next = await move(p.pid, step);
      expect(next).toEqual(await stored(p.pid));
      expect(await rt.process(p.pid)).toEqual(next);
    }
  });

  it('[K-15] an invalid state shape is refused at the write boundary and the row is unchanged', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    const bad: Parameters<typeof transition>[2][] = [
      { to: 'waiting_event' },
      { to: 'waiting_event', wait: { kind: 'child' } as never },
      { to: 'waiting_human', wait: { kind: 'human', request_ids: [] } },
      { to: 'exited' },
      { to: 'killed', outcome: { kind: 'exited', result_oid: null } },
      { to: 'runnable', wait: { kind: 'paused' } },
      { to: 'running', outcome: { kind: 'failed' } },
    ];
    for (const spec of bad) {
      await expect(move(p.pid, spec), JSON.stringify(spec)).rejects.toMatchObject({ code: 'internal_error' });
      expect(await rt.process(p.pid)).toEqual(p);
    }
  });

  it('refuses a transition from a status outside `from`; [] matches nothing', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await expect(move(p.pid, { from: ['paused'], to: 'runnable' })).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(move(p.pid, { from: [], to: 'running' })).rejects.toMatchObject({ code: 'invalid_state' });
    expect(await rt.process(p.pid)).toEqual(p);
  });

  it('[K-17] of two concurrent claims (runnable -> running) exactly one commits', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    const claims = await Promise.allSettled([
      move(p.pid, { from: ['runnable'], to: 'running' }),
      move(p.pid, { from: ['runnable'], to: 'running' }),
    ]);
    expect(claims.map((c) => c.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = claims.find((c) => c.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason).toMatchObject({ code: 'invalid_state' });
    expect(await rt.process(p.pid)).toMatchObject({ status: 'running', stateGeneration: 2 });
  });
});

describe('wakeIfWaiting', () => {
  it('[K-14] wakes a process that waits in exactly that way, once', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    const waiting = await move(p.pid, { to: 'waiting_event', wait: childWait('pid_00000000000000aa') });
    expect(await wake(p.pid, 'pid_00000000000000aa')).toBe(true);
    expect(await rt.process(p.pid)).toMatchObject({ status: 'runnable', waitState: null, stateGeneration: waiting.stateGeneration + 1 });
    expect((await rt.events({ type: 'process_woken' })).map((e) => e.data.pid)).toEqual([p.pid]);
    // The same wake again is stale: nothing changes.
    const woken = await rt.process(p.pid);
    expect(await wake(p.pid, 'pid_00000000000000aa')).toBe(false);
    expect(await rt.process(p.pid)).toEqual(woken);
    expect(await rt.events({ type: 'process_woken' })).toHaveLength(1);
  });

  it('[K-14] a stale wake (an older wait) is a no-op for a process that now waits on something else', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await move(p.pid, { to: 'waiting_event', wait: childWait('pid_00000000000000aa') });
    await move(p.pid, { to: 'runnable' });
    const newer = await move(p.pid, { to: 'waiting_event', wait: childWait('pid_00000000000000bb') });
    expect(await wake(p.pid, 'pid_00000000000000aa')).toBe(false);
    expect(await rt.process(p.pid)).toEqual(newer);
    const human = await move(p.pid, { to: 'waiting_human', wait: { kind: 'human', request_ids: ['hreq_0000000000000001'] } });
    expect(await wake(p.pid, 'pid_00000000000000bb')).toBe(false);
    expect(await rt.process(p.pid)).toEqual(human);
    // A paused or terminal process is never woken.
    await move(p.pid, { to: 'paused', wait: { kind: 'paused' } });
    expect(await rt.transaction((scope) => wakeIfWaiting(scope, p.pid, () => true, 'any'))).toBe(false);
    await move(p.pid, { to: 'killed', outcome: { kind: 'killed', code: 'terminated' } });
    expect(await rt.transaction((scope) => wakeIfWaiting(scope, p.pid, () => true, 'any'))).toBe(false);
    expect(await rt.events({ type: 'process_woken' })).toEqual([]);
  });
});
