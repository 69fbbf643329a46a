// Long file: one scenario's stories over one shared harness; split, each file would repeat the setup.
// Process lifecycle on the real kernel (docs/behaviour/kernel.md): spawn_child, wait, signal, exit, typed states.
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  batches,
  CHILD_SKILL,
  equip,
  MEMORY_SKILL,
  openKernel,
  failInsertsWhere,
  spawnChild,
  StateProvider,
  supervisor,
  withObjects,
} from './support/kernel-harness.js';

let rt: Runtime;
afterEach(async () => rt?.close());

describe('spawn_child_process', () => {
  it(`[K-3] a child gets a fresh namespace, a goal-only view, none of the parent Skills, and half the parent remaining \
budget`, async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const before = await rt.budget(parent.pid);
    const r = await rt.call(parent.pid, 'spawn_child_process', { goal: 'count the widgets' });
    expect(r.ok).toBe(true);
    const childPid = ((r as { payload: unknown }).payload as { pid: string }).pid;
    const child = await rt.process(childPid);
    expect(child).toMatchObject({ parentPid: parent.pid, status: 'runnable', imageId: parent.imageId, goal: 'count the widgets' });
    // Fresh namespace, goal-only view: the child's only root is its own goal Object, in its own scope.
    const roots = await withObjects(rt, (o) => o.viewRoots(childPid));
    expect(roots.map((x) => x.oid)).toEqual([child.goalOid]);
    const goal = await withObjects(rt, (o) => o.describe(child.goalOid!));
    expect(goal).toMatchObject({ namespace: `process:${childPid}`, type: 'goal' });
    // No parent Skills: only the image defaults, and the parent's grants are not copied.
    expect(Object.keys(parent.loadedSkills)).toEqual(expect.arrayContaining([CHILD_SKILL, MEMORY_SKILL]));
    expect(Object.keys(child.loadedSkills).sort()).toEqual(['agent-libos-runtime-session', 'agent-libos-skill-navigation']);
    expect((await rt.capabilities(childPid)).map((c) => c.resource)).not.toContain('process:spawn');
    // Budget: the spawn call costs one tool call, then the child takes half of what remains; P's child count + 1.
    const afterCall = before.remaining.tool_calls! - 1;
    const childBudget = await rt.budget(childPid);
    expect(childBudget.limits.tool_calls).toBe(Math.floor(afterCall / 2));
    expect(childBudget.limits.child_processes).toBe(Math.floor((before.remaining.child_processes! - 1) / 2));
    const after = await rt.budget(parent.pid);
    expect(after.usage.child_processes).toBe((before.usage.child_processes ?? 0) + 1);
    expect((await rt.audit({ action: 'resource.reserve_child_budget' })).map((a) => a.details.pid)).toEqual([childPid]);
  });

  it('[K-4] a parent at its child limit is refused: no row, no reservation, no child count', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt, 'one child only', { budget: { child_processes: 1 } });
    await spawnChild(rt, parent.pid);
    const before = await rt.budget(parent.pid);
    const rows = (await rt.processes()).length;
    const r = await rt.call(parent.pid, 'spawn_child_process', { goal: 'a second child' });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.code).toBe('resource_limit_exceeded');
    expect((await rt.processes()).length).toBe(rows);
    const after = await rt.budget(parent.pid);
    expect(after.usage.child_processes).toBe(before.usage.child_processes);
    expect(after.remaining.child_processes).toBe(0);
    expect(await rt.audit({ action: 'resource.reserve_child_budget' })).toHaveLength(1);
    expect(await rt.events({ type: 'process_created' })).toHaveLength(2);
  });

  it('[K-4] an explicit child budget larger than the parent remaining is refused: no row, no reservation', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt, 'frugal', { budget: { tool_calls: 20 } });
    const before = await rt.budget(parent.pid);
    const r = await rt.call(parent.pid, 'spawn_child_process', { goal: 'greedy child', budget: { tool_calls: 50 } });
    expect(!r.ok && r.error.code).toBe('resource_limit_exceeded');
    expect((await rt.processes()).map((p) => p.pid)).toEqual([parent.pid]);
    const after = await rt.budget(parent.pid);
    expect(after.usage.child_processes ?? 0).toBe(before.usage.child_processes ?? 0);
    expect(after.remaining.child_processes).toBe(before.remaining.child_processes);
    expect(await rt.audit({ action: 'resource.reserve_child_budget' })).toEqual([]);
    // An explicit budget that fits is accepted as given.
    const ok = await rt.call(parent.pid, 'spawn_child_process', { goal: 'modest child', budget: { tool_calls: 5 } });
    expect(ok.ok).toBe(true);
    expect((await rt.budget(((ok as { payload: unknown }).payload as { pid: string }).pid)).limits.tool_calls).toBe(5);
  });
});

describe('wait_child_process', () => {
  it(`[K-6] a blocking wait on a live child parks the parent in waiting_event{child} and it is not scheduled; block=false answers \
ready:false`, async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    const nb = await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid, block: false });
    expect(nb).toMatchObject({ ok: true, payload: { child_pid: childPid, ready: false, status: 'runnable', result_oid: null } });
    expect((await rt.process(parent.pid)).status).toBe('runnable');

    const w = await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid });
    expect(w).toMatchObject({ ok: true, wait: { kind: 'child', child_pid: childPid } });
    expect(await rt.process(parent.pid)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'child', child_pid: childPid } });
    // The child blocks on a message, so the scheduler goes idle with the parent never given a quantum.
    await equip(rt, childPid);
    const provider = new ScriptedProvider({
      processes: { [childPid]: [[{ tool: 'receive_process_messages', args: { block: true, channel: 'never' } }]] },
    });
    const report = await rt.run({ provider, maxQuanta: 10 });
    expect(report.idle).toBe(true);
    expect(provider.requests.map((q) => q.pid)).toEqual([childPid]);
    expect(await rt.llmCalls({ pid: parent.pid })).toEqual([]);
    expect((await rt.process(parent.pid)).status).toBe('waiting_event');
    // A waiting process cannot call tools.
    const denied = await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid, block: false });
    expect(!denied.ok && denied.error.code).toBe('process_not_tool_callable');
  });

  it(`[K-7] the child exit wakes the waiting parent in the same commit, and the saved wait resumes with no provider call and a readable \
result`, async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid });
    const waitingGen = (await rt.process(parent.pid)).stateGeneration;

    // Committed events reach the bus synchronously after their commit: events of one transaction arrive with no
    // microtask between them, events of two transactions cannot (an await separates the commits).
    const seen: string[] = [];
    rt.watch({
      event: (e) => {
        if (e.type === 'process_exited' && e.data.pid === childPid) {
          seen.push('child_exited');
          queueMicrotask(() => seen.push('next_microtask'));
        }
        if (e.type === 'process_woken' && e.data.pid === parent.pid) seen.push('parent_woken');
      },
    });

    const provider = new ScriptedProvider({
      processes: {
        [childPid]: [[{ tool: 'process_exit', args: { payload: { widgets: 7 } } }]],
        [parent.pid]: [[{ tool: 'process_exit', args: { message: 'parent done' } }]],
      },
    });
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results.map((r) => [r.pid, r.kind])).toEqual([[childPid, 'turn']]);
    expect(seen).toEqual(['child_exited', 'parent_woken', 'next_microtask']);
    const child = await rt.process(childPid);
    expect(child.status).toBe('exited');
    const woken = await rt.process(parent.pid);
    expect(woken).toMatchObject({ status: 'runnable', waitState: null, stateGeneration: waitingGen + 1 });

    // Stored order: the child's process_exited and process.exit, then the parent's process_woken, one seq apart
    // from nothing of another transaction.
    const events = await rt.events({ limit: 10_000 });
    const exitedAt = events.findIndex((e) => e.type === 'process_exited' && e.data.pid === childPid);
    const wokenAt = events.findIndex((e) => e.type === 'process_woken' && e.data.pid === parent.pid);
    expect(exitedAt).toBeGreaterThan(-1);
    expect(wokenAt).toBe(exitedAt + 1);
    expect(events[wokenAt]!.data).toMatchObject({ reason: `child ${childPid} exited`, wait: { kind: 'child', child_pid: childPid } });

    // The parent's next quantum resumes the saved call: no model call, and the child's result becomes readable.
    const callsBefore = provider.calls;
    const resumed = await rt.run({ provider, maxQuanta: 1 });
    expect(provider.calls).toBe(callsBefore);
    expect(resumed.results).toHaveLength(1);
    expect(resumed.results[0]).toMatchObject({ pid: parent.pid, kind: 'resumed', executed: ['wait_child_process'] });
    const resultOid = child.outcome!.result_oid as string;
    expect(resumed.results[0]!.results[0]).toMatchObject({
      ok: true,
      payload: { child_pid: childPid, ready: true, status: 'exited', result_oid: resultOid },
    });
    const canRead = await rt.transaction((scope) => scope.authorityFor(parent.pid).check(`object:${resultOid}`, 'read'));
    expect(canRead.allowed).toBe(true);
    expect((await withObjects(rt, (o) => o.viewRoots(parent.pid))).map((x) => x.oid)).toContain(resultOid);
    expect(await withObjects(rt, (o) => o.readPayload(resultOid))).toEqual({ widgets: 7 });
    expect(await rt.transaction(async (scope) => scope.store.selectFrom('pending_actions').selectAll().execute())).toEqual([]);

    await rt.run({ provider });
    expect((await rt.process(parent.pid)).status).toBe('exited');
  });

  it('[K-49] the exit and the parent wake are one transaction: a failure while waking rolls the exit back too', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid });
    const childBefore = await rt.process(childPid);
    const parentBefore = await rt.process(parent.pid);
    const heal = await failInsertsWhere(rt, {
      name: 'fail_wake',
      table: 'events',
      column: 'type',
      value: 'process_woken',
      message: 'injected wake failure',
    });

    const exit = await rt.call(childPid, 'process_exit', { message: 'done' });
    expect(exit.ok).toBe(false);
    expect(await rt.process(childPid)).toEqual(childBefore);
    expect(await rt.process(parent.pid)).toEqual(parentBefore);
    expect(await rt.events({ type: 'process_exited' })).toEqual([]);
    expect(await rt.audit({ action: 'process.exit' })).toEqual([]);
    expect(await rt.transaction(async (scope) => scope.store.selectFrom('pending_actions').select(['pid', 'status']).execute())).toEqual([
      { pid: parent.pid, status: 'pending' },
    ]);

    await heal();
    const again = await rt.call(childPid, 'process_exit', { message: 'done' });
    expect(again.ok).toBe(true);
    expect((await rt.process(parent.pid)).status).toBe('runnable');
  });

  it('[K-8] waiting on or signalling a pid that is not a direct child, or sending the interrupt signal, is an error', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const stranger = await supervisor(rt, 'someone else');
    const childPid = await spawnChild(rt, parent.pid);
    await equip(rt, childPid);
    const grandchildPid = await spawnChild(rt, childPid);

    for (const target of [stranger.pid, grandchildPid, parent.pid, 'pid_ffffffffffffffff']) {
      const w = await rt.call(parent.pid, 'wait_child_process', { child_pid: target });
      expect(!w.ok && w.error.code, `wait ${target}`).toBe('not_direct_child');
      const s = await rt.call(parent.pid, 'signal_child_process', { child_pid: target, signal: 'terminate' });
      expect(!s.ok && s.error.code, `signal ${target}`).toBe('not_direct_child');
    }
    const interrupt = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'interrupt' });
    expect(!interrupt.ok && interrupt.error.code).toBe('invalid_arguments');
    for (const p of [parent.pid, stranger.pid, childPid, grandchildPid]) expect((await rt.process(p)).status).toBe('runnable');
  });
});

describe('process_exit', () => {
  it('[K-9] exiting a process that has already exited is an error, by every path', async () => {
    rt = await openKernel();
    const p = await supervisor(rt);
    expect(await rt.call(p.pid, 'process_exit', {})).toMatchObject({ ok: true, payload: { status: 'exited', result_oid: null } });
    const exited = await rt.process(p.pid);

    const again = await rt.call(p.pid, 'process_exit', {});
    expect(!again.ok && again.error.code).toBe('process_not_tool_callable');
    await expect(
      rt.transaction((scope) =>
        scope.service<{ exit(pid: string, o: { resultOid: null }): Promise<unknown> }>('processes').exit(p.pid, { resultOid: null }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(rt.signal(p.pid, 'terminate')).rejects.toMatchObject({ code: 'invalid_state' });
    expect(await rt.process(p.pid)).toEqual(exited);
    expect(await rt.events({ type: 'process_exited' })).toHaveLength(1);
  });

  it('[K-10] the result is result_oid > payload (a new summary Object) > message ({message}) > null', async () => {
    rt = await openKernel();
    const exitWith = async (args: Record<string, unknown>) => {
      const p = await supervisor(rt);
      const made = await rt.call(p.pid, 'create_memory_object', { type: 'artifact', name: 'report', payload: { report: 'ready' } });
      expect(made.ok).toBe(true);
      const oid = ((made as { payload: unknown }).payload as { oid: string }).oid;
      const r = await rt.call(p.pid, 'process_exit', typeof args.result_oid === 'string' ? { ...args, result_oid: oid } : args);
      expect(r.ok).toBe(true);
      const after = await rt.process(p.pid);
      expect(after.status).toBe('exited');
      const resultOid = after.outcome!.result_oid as string | null;
      expect(((r as { payload: unknown }).payload as { result_oid: string | null }).result_oid).toBe(resultOid);
      return { made: oid, resultOid };
    };
    const all = await exitWith({ result_oid: 'x', payload: { p: 1 }, message: 'm' });
    expect(all.resultOid).toBe(all.made);

    const payload = await exitWith({ payload: { p: 1 }, message: 'm' });
    expect(payload.resultOid).not.toBe(payload.made);
    expect(await withObjects(rt, (o) => o.readPayload(payload.resultOid!))).toEqual({ p: 1 });
    expect(await withObjects(rt, (o) => o.describe(payload.resultOid!))).toMatchObject({ type: 'summary' });

    const message = await exitWith({ message: 'm' });
    expect(await withObjects(rt, (o) => o.readPayload(message.resultOid!))).toEqual({ message: 'm' });
    expect(await withObjects(rt, (o) => o.describe(message.resultOid!))).toMatchObject({ type: 'summary' });

    const none = await exitWith({});
    expect(none.resultOid).toBeNull();

    // An unreadable result_oid is refused and the process stays live.
    const p = await supervisor(rt);
    const bad = await rt.call(p.pid, 'process_exit', { result_oid: 'obj_00000000000000ff', payload: { p: 1 } });
    expect(!bad.ok && bad.error.code).toBe('object_not_found');
    expect((await rt.process(p.pid)).status).toBe('runnable');
  });
});

describe('signal_child_process', () => {
  it('[K-11] pause makes a child paused and unscheduled, resume makes it runnable; pausing a waiting child is refused', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    const paused = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'pause', reason: 'hold on' });
    expect(paused).toMatchObject({ ok: true, payload: { status: 'paused' } });
    expect(await rt.process(childPid)).toMatchObject({ status: 'paused', waitState: { kind: 'paused' } });

    const provider = new StateProvider((pid) =>
      pid === childPid
        ? [{ tool: 'process_exit', args: {} }]
        : [{ tool: 'wait_child_process', args: { child_pid: childPid, block: false } }],
    );
    await rt.run({ provider, maxQuanta: 3 });
    expect(provider.perPid.get(childPid)).toBeUndefined();
    expect((await rt.process(childPid)).status).toBe('paused');
    const twice = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'pause' });
    expect(!twice.ok && twice.error.code).toBe('invalid_state');

    const resumed = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'resume' });
    expect(resumed).toMatchObject({ ok: true, payload: { status: 'runnable' } });
    expect(await rt.process(childPid)).toMatchObject({ status: 'runnable', waitState: null });
    const resumeRunnable = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'resume' });
    expect(!resumeRunnable.ok && resumeRunnable.error.code).toBe('invalid_state');

    // A child parked in a wait cannot be paused (it would lose its wait).
    await equip(rt, childPid);
    await rt.call(childPid, 'receive_process_messages', { block: true, channel: 'go' });
    const waiting = await rt.process(childPid);
    expect(waiting.status).toBe('waiting_event');
    const refused = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'pause' });
    expect(!refused.ok && refused.error.code).toBe('invalid_state');
    expect(await rt.process(childPid)).toEqual(waiting);
  });

  it('[K-12] terminating a child with a pending human question kills it, cancels the question and wakes the waiting parent', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    await equip(rt, childPid);
    const ask = await rt.call(childPid, 'ask_human', { question: 'Which colour?' });
    expect(ask).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const [request] = await rt.humanRequests({ pid: childPid });
    expect(request).toMatchObject({ status: 'pending' });
    expect(await rt.process(childPid)).toMatchObject({ status: 'waiting_human', waitState: { kind: 'human', request_ids: [request!.id] } });
    await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid });
    expect((await rt.process(parent.pid)).status).toBe('waiting_event');

    const killed = await rt.signal(childPid, 'terminate', 'taking too long');
    expect(killed).toMatchObject({ status: 'killed', waitState: null, outcome: { kind: 'killed', code: 'terminated' } });
    expect((await rt.humanRequests({ pid: childPid }))[0]).toMatchObject({ id: request!.id, status: 'cancelled' });
    expect(await rt.process(parent.pid)).toMatchObject({ status: 'runnable', waitState: null });
    const pending = await rt.transaction(async (scope) => scope.store.selectFrom('pending_actions').select(['pid', 'status']).execute());
    expect(pending).toEqual([{ pid: parent.pid, status: 'pending' }]);
    await expect(rt.answerHuman(request!.id, { approved: true, answer: 'blue' })).rejects.toMatchObject({
      code: 'human_request_not_pending',
    });

    const provider = new ScriptedProvider([]);
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(provider.calls).toBe(0);
    expect(report.results[0]!.results[0]).toMatchObject({
      ok: true,
      payload: { child_pid: childPid, ready: true, status: 'killed', outcome: { kind: 'killed', code: 'terminated' } },
    });
  });

  it('a parent terminating its own waiting child through the tool gets killed + cancelled in one call', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    await equip(rt, childPid);
    await rt.call(childPid, 'ask_human', { question: 'Proceed?' });
    const r = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'cancel' });
    expect(r).toMatchObject({ ok: true, payload: { status: 'killed' } });
    expect((await rt.process(childPid)).outcome).toMatchObject({ kind: 'killed', code: 'cancelled' });
    expect((await rt.humanRequests({ pid: childPid })).map((h) => h.status)).toEqual(['cancelled']);
    const dead = await rt.call(parent.pid, 'signal_child_process', { child_pid: childPid, signal: 'terminate' });
    expect(!dead.ok && dead.error.code).toBe('invalid_state');
  });
});

describe('typed state and generations', () => {
  it('[K-14] every transition adds exactly one to stateGeneration', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const gens: [string, number][] = [];
    const note = async (pid: string) => {
      const p = await rt.process(pid);
      gens.push([p.status, p.stateGeneration]);
    };
    await note(parent.pid); // spawn: created -> runnable
    const childPid = await spawnChild(rt, parent.pid);
    await note(parent.pid); // a tool call is not a transition
    await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid });
    await note(parent.pid);
    await rt.call(childPid, 'process_exit', {});
    await note(parent.pid);
    const provider = new ScriptedProvider([]);
    await rt.run({ provider, maxQuanta: 1 }); // runnable -> running -> runnable (resume)
    await note(parent.pid);
    await rt.signal(parent.pid, 'pause');
    await note(parent.pid);
    await rt.signal(parent.pid, 'resume');
    await note(parent.pid);
    await rt.signal(parent.pid, 'terminate');
    await note(parent.pid);
    expect(gens).toEqual([
      ['runnable', 1],
      ['runnable', 1],
      ['waiting_event', 2],
      ['runnable', 3],
      ['runnable', 5],
      ['paused', 6],
      ['runnable', 7],
      ['killed', 8],
    ]);
  });

  it('[K-14] a stale wake is a no-op: an old child exit does not wake a parent that now waits on another child', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const first = await spawnChild(rt, parent.pid, { goal: 'first' });
    const second = await spawnChild(rt, parent.pid, { goal: 'second' });
    await rt.call(parent.pid, 'wait_child_process', { child_pid: second });
    const waiting = await rt.process(parent.pid);
    await rt.call(first, 'process_exit', {});
    expect(await rt.process(parent.pid)).toEqual(waiting);
    expect((await rt.events({ type: 'process_woken' })).filter((e) => e.data.pid === parent.pid)).toEqual([]);
    await rt.call(second, 'process_exit', {});
    expect(await rt.process(parent.pid)).toMatchObject({ status: 'runnable', stateGeneration: waiting.stateGeneration + 1 });
  });
});

describe('batches through the executor', () => {
  it('a killed child never gets another quantum, and its parent sees the kill', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    const provider = new StateProvider((pid, n) =>
      pid === parent.pid
        ? n === 0
          ? [{ tool: 'signal_child_process', args: { child_pid: childPid, signal: 'terminate' } }]
          : [{ tool: 'process_exit', args: {} }]
        : [{ tool: 'process_exit', args: { message: 'should not run' } }],
    );
    // The child was spawned after the parent, so the parent goes first in the round.
    await rt.run({ provider });
    expect(provider.perPid.get(childPid)).toBeUndefined();
    expect((await rt.process(childPid)).status).toBe('killed');
    expect((await batches(rt, parent.pid)).map((b) => b.decision)).toEqual(['completed', 'process_terminal']);
  });
});
