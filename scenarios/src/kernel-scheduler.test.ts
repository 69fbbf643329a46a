// The scheduler and the executor's batch rules on the real kernel (docs/behaviour/kernel.md).
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { batches, objectNames, failInsertsWhere, openKernel, spawnChild, StateProvider, supervisor } from './support/kernel-harness.js';

let rt: Runtime;
afterEach(async () => rt?.close());

const create = (name: string) => ({ tool: 'create_memory_object', args: { type: 'observation', name, payload: { name } } });

describe('runUntilIdle', () => {
  it('[K-16] two scripted pids run to exit; maxQuanta 3 spends exactly 3 quanta in total, fairly', async () => {
    rt = await openKernel();
    const a = await supervisor(rt, 'a');
    const b = await supervisor(rt, 'b');
    const provider = new ScriptedProvider({
      processes: { '*': [[create('one')], [create('two')], [{ tool: 'process_exit', args: { message: 'done' } }]] },
    });

    const first = await rt.run({ provider, maxQuanta: 3 });
    expect(first).toMatchObject({ quanta: 3, idle: false });
    expect(first.results.map((r) => r.pid)).toEqual([a.pid, b.pid, a.pid]);
    expect(provider.calls).toBe(3);
    expect(await rt.llmCalls({ limit: 100 })).toHaveLength(3);
    expect((await rt.processes()).map((p) => p.status)).toEqual(['runnable', 'runnable']);

    const rest = await rt.run({ provider });
    expect(rest).toMatchObject({ quanta: 3, idle: true });
    expect(rest.results.map((r) => r.pid)).toEqual([b.pid, a.pid, b.pid]);
    expect((await rt.processes()).map((p) => p.status)).toEqual(['exited', 'exited']);
    expect(await objectNames(rt, a.pid)).toEqual(['goal', 'one', 'two']);
    expect(provider.calls).toBe(6);
  });

  it('[K-16] maxQuanta is global: it counts quanta of every pid, resumed ones included', async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    await rt.grant(parent.pid, 'clock:now', ['read'], { delegable: true });
    const provider = new StateProvider(async (pid, n) => {
      if (pid !== parent.pid) {
        // The child works until its parent waits, so the parent really parks and resumes.
        return (await rt.process(parent.pid)).status === 'waiting_event'
          ? [{ tool: 'process_exit', args: {} }]
          : [{ tool: 'get_current_time', args: {} }];
      }
      if (n === 0)
        return [
          { tool: 'spawn_child_process', args: { goal: 'child', inherit_capabilities: [{ resource: 'clock:now', rights: ['read'] }] } },
        ];
      if (n === 1)
        return [{ tool: 'wait_child_process', args: { child_pid: (await rt.processes()).find((p) => p.parentPid === parent.pid)!.pid } }];
      return [{ tool: 'process_exit', args: {} }];
    });
    const steps: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await rt.run({ provider, maxQuanta: 1 });
      expect(r.quanta).toBeLessThanOrEqual(1);
      steps.push(...r.results.map((q) => `${q.pid === parent.pid ? 'parent' : 'child'}:${q.kind}:${q.executed.join('+')}`));
      if (r.quanta === 0) break;
    }
    expect(steps).toEqual([
      'parent:turn:spawn_child_process',
      'child:turn:get_current_time',
      'parent:turn:wait_child_process',
      'child:turn:process_exit',
      'parent:resumed:wait_child_process',
      'parent:turn:process_exit',
    ]);
    expect((await rt.processes()).every((p) => p.status === 'exited')).toBe(true);
    expect(provider.calls).toBe(5);
  });

  it('[K-17] two concurrent claims of one pid: one quantum runs, the other run gets none', async () => {
    rt = await openKernel();
    const p = await supervisor(rt);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const provider = new StateProvider(async (_pid, n) => {
      if (n === 0) await gate; // hold the first quantum in flight while the other run tries the same pid
      return [{ tool: 'process_exit', args: {} }];
    });
    const one = rt.run({ provider });
    const two = rt.run({ provider });
    const firstDone = await Promise.race([one, two]);
    expect(firstDone).toMatchObject({ quanta: 0, idle: true });
    expect((await rt.process(p.pid)).status).toBe('running');
    release();
    const [r1, r2] = await Promise.all([one, two]);
    expect(r1.quanta + r2.quanta).toBe(1);
    expect(provider.calls).toBe(1);
    expect(await rt.llmCalls({ pid: p.pid })).toHaveLength(1);
    expect((await rt.process(p.pid)).status).toBe('exited');
  });

  it(`200 processes (100 parents each spawning and waiting on one child) all exit in one runUntilIdle; each parent is woken exactly \
once`, async () => {
    rt = await openKernel();
    const parents: string[] = [];
    for (let i = 0; i < 100; i++) {
      const p = await supervisor(rt, `parent ${i}`);
      await rt.grant(p.pid, 'clock:now', ['read'], { delegable: true });
      parents.push(p.pid);
    }
    const parentSet = new Set(parents);
    const childOf = new Map<string, string>();
    const provider = new StateProvider(async (pid, n) => {
      if (parentSet.has(pid)) {
        if (n === 0)
          return [
            {
              tool: 'spawn_child_process',
              args: { goal: `help ${pid}`, inherit_capabilities: [{ resource: 'clock:now', rights: ['read'] }] },
            },
          ];
        if (n === 1) {
          const child = (await rt.processes()).find((p) => p.parentPid === pid)!.pid;
          childOf.set(pid, child);
          return [{ tool: 'wait_child_process', args: { child_pid: child } }];
        }
        return [{ tool: 'process_exit', args: { message: `parent ${pid} done` } }];
      }
      // A child works (reads the clock) until its parent waits, then exits with a result.
      const me = await rt.process(pid);
      const parent = await rt.process(me.parentPid!);
      return parent.status === 'waiting_event'
        ? [{ tool: 'process_exit', args: { payload: { child: pid } } }]
        : [{ tool: 'get_current_time', args: {} }];
    });

    const report = await rt.run({ provider });
    expect(report.idle).toBe(true);
    const all = await rt.processes();
    expect(all).toHaveLength(200);
    expect(all.filter((p) => p.status !== 'exited')).toEqual([]);
    expect(childOf.size).toBe(100);
    const wakes = new Map<string, number>();
    for (const e of await rt.events({ type: 'process_woken', limit: 10_000 }))
      wakes.set(e.data.pid as string, (wakes.get(e.data.pid as string) ?? 0) + 1);
    expect([...wakes.keys()].sort()).toEqual([...parents].sort());
    expect([...wakes.values()].every((n) => n === 1)).toBe(true);
    // Every parent resumed its wait once, without a model call: 3 model turns + 1 resume per parent.
    const resumed = report.results.filter((r) => r.kind === 'resumed');
    expect(resumed.map((r) => r.pid).sort()).toEqual([...parents].sort());
    for (const pid of parents) expect(provider.perPid.get(pid)).toBe(3);
    for (const r of resumed)
      expect(r.results[0]).toMatchObject({ ok: true, payload: { ready: true, status: 'exited', child_pid: childOf.get(r.pid) } });
    expect(await rt.transaction(async (scope) => scope.store.selectFrom('pending_actions').selectAll().execute())).toEqual([]);
  }, 180_000); // ~600 quanta on SQLite: a generous ceiling, not an assertion about speed
});

describe('batches', () => {
  it(`[K-22] a batch [read, wait_child, write] runs the read, parks on the wait, and never runs the write, not even after the \
resume`, async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    const provider = new ScriptedProvider({
      processes: {
        [parent.pid]: [
          [
            { tool: 'read_memory_object', args: { name: 'goal' } },
            { tool: 'wait_child_process', args: { child_pid: childPid } },
            create('after-wait'),
          ],
          [{ tool: 'process_exit', args: {} }],
        ],
        [childPid]: [[{ tool: 'process_exit', args: {} }]],
      },
    });
    const first = await rt.run({ provider, maxQuanta: 1 });
    expect(first.results[0]).toMatchObject({
      pid: parent.pid,
      kind: 'turn',
      stopReason: 'waiting_child',
      executed: ['read_memory_object', 'wait_child_process'],
      skipped: ['create_memory_object'],
    });
    expect(first.results[0]!.results[0]).toMatchObject({ ok: true, payload: { name: 'goal' } });
    expect((await rt.process(parent.pid)).status).toBe('waiting_event');
    const [batch] = await batches(rt, parent.pid);
    expect(batch!.details).toMatchObject({
      requested: ['read_memory_object', 'wait_child_process', 'create_memory_object'],
      executed: ['read_memory_object', 'wait_child_process'],
      skipped: ['create_memory_object'],
      stop_reason: 'waiting_child',
    });

    const rest = await rt.run({ provider });
    expect(rest.idle).toBe(true);
    const resumed = rest.results.find((r) => r.pid === parent.pid && r.kind === 'resumed')!;
    expect(resumed).toMatchObject({ executed: ['wait_child_process'], skipped: [] });
    expect((await rt.process(parent.pid)).status).toBe('exited');
    expect(await objectNames(rt, parent.pid)).not.toContain('after-wait');
    const calls = (await rt.audit({ pid: parent.pid, action: 'tool.call', limit: 1000 })).map((a) => a.target);
    expect(calls).not.toContain('tool:create_memory_object');
    expect(provider.requests.filter((q) => q.pid === parent.pid)).toHaveLength(2);
  });

  it('[K-23] a batch [process_exit, write] exits and never runs the write', async () => {
    rt = await openKernel();
    const p = await supervisor(rt);
    const provider = new ScriptedProvider({
      processes: { [p.pid]: [[{ tool: 'process_exit', args: { message: 'bye' } }, create('too-late')]] },
    });
    const report = await rt.run({ provider });
    expect(report.results).toHaveLength(1);
    expect(report.results[0]).toMatchObject({
      stopReason: 'process_terminal',
      executed: ['process_exit'],
      skipped: ['create_memory_object'],
    });
    expect((await rt.process(p.pid)).status).toBe('exited');
    expect(await objectNames(rt, p.pid)).not.toContain('too-late');
    expect((await batches(rt, p.pid))[0]!.details).toMatchObject({
      executed: ['process_exit'],
      skipped: ['create_memory_object'],
      stop_reason: 'process_terminal',
    });
  });

  it('a batch [create, process_exit, create] runs exactly the first two', async () => {
    rt = await openKernel();
    const p = await supervisor(rt);
    const provider = new ScriptedProvider({
      processes: { [p.pid]: [[create('before'), { tool: 'process_exit', args: {} }, create('after')]] },
    });
    const report = await rt.run({ provider });
    expect(report.results[0]).toMatchObject({ executed: ['create_memory_object', 'process_exit'], skipped: ['create_memory_object'] });
    const names = await objectNames(rt, p.pid);
    expect(names).toContain('before');
    expect(names).not.toContain('after');
    expect((await rt.process(p.pid)).status).toBe('exited');
    const toolCalls = (await rt.audit({ pid: p.pid, action: 'tool.call', limit: 1000 })).map((a) => a.target);
    expect(toolCalls).toEqual(['tool:create_memory_object', 'tool:process_exit']);
    expect(provider.calls).toBe(1);
  });

  it(`[K-25] an error after a saved call is claimed fails the process closed with llm.pending_action_resume_interrupted, never \
replayed`, async () => {
    rt = await openKernel();
    const parent = await supervisor(rt);
    const childPid = await spawnChild(rt, parent.pid);
    await rt.call(parent.pid, 'wait_child_process', { child_pid: childPid });
    await rt.call(childPid, 'process_exit', {});
    expect((await rt.process(parent.pid)).status).toBe('runnable');
    // Every attempt to record the resumed call (its success and then its failure) now fails in the store.
    await failInsertsWhere(rt, {
      name: 'fail_tool_audit',
      table: 'audit_records',
      column: 'action',
      value: 'tool.call',
      message: 'injected audit failure',
    });
    const provider = new ScriptedProvider([]);
    const report = await rt.run({ provider });
    expect(report.results.map((r) => [r.pid, r.kind])).toEqual([[parent.pid, 'failed']]);
    expect(provider.calls).toBe(0);
    expect(await rt.process(parent.pid)).toMatchObject({
      status: 'failed',
      outcome: { kind: 'failed', code: 'pending_action_resume_interrupted' },
    });
    const [audit] = await rt.audit({ action: 'llm.pending_action_resume_interrupted' });
    expect(audit).toMatchObject({ target: `process:${parent.pid}`, details: { tool: 'wait_child_process' } });
    expect(await rt.transaction(async (scope) => scope.store.selectFrom('pending_actions').selectAll().execute())).toEqual([]);
    expect((await rt.events({ type: 'tool_completed', pid: parent.pid })).filter((e) => e.data.tool === 'wait_child_process')).toEqual([]);
  });

  it('[K-24] a batch larger than the remaining tool budget dispatches nothing', async () => {
    rt = await openKernel();
    const p = await supervisor(rt, 'small', { budget: { tool_calls: 2 } });
    const provider = new ScriptedProvider({ processes: { [p.pid]: [[create('a'), create('b'), create('c')]] } });
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({
      stopReason: 'resource_limit_exceeded',
      executed: [],
      skipped: ['create_memory_object', 'create_memory_object', 'create_memory_object'],
    });
    expect(await objectNames(rt, p.pid)).toEqual(['goal']);
    expect((await rt.budget(p.pid)).usage.tool_calls ?? 0).toBe(0);
    expect(await rt.audit({ pid: p.pid, action: 'tool.call' })).toEqual([]);
    expect((await rt.process(p.pid)).status).toBe('runnable');
  });

  it('a resumed call that fails is an ordinary tool failure: the saved call is settled and the next quantum asks the model', async () => {
    rt = await openKernel();
    const p = await supervisor(rt);
    const provider = new ScriptedProvider({
      processes: {
        [p.pid]: [
          [{ tool: 'ask_human', args: { question: 'May I?' } }],
          [{ tool: 'process_exit', args: { message: 'asked and refused' } }],
        ],
      },
    });
    await rt.run({ provider });
    expect((await rt.process(p.pid)).status).toBe('waiting_human');
    const [req] = await rt.humanRequests({ pid: p.pid });
    await rt.answerHuman(req!.id, { approved: false });
    expect((await rt.process(p.pid)).status).toBe('runnable');

    const resumed = await rt.run({ provider, maxQuanta: 1 });
    expect(resumed.results[0]).toMatchObject({ kind: 'resumed', stopReason: 'tool_failed', executed: ['ask_human'] });
    expect(resumed.results[0]!.results[0]).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(provider.calls).toBe(1);
    expect(await rt.transaction(async (scope) => scope.store.selectFrom('pending_actions').selectAll().execute())).toEqual([]);
    expect((await rt.process(p.pid)).status).toBe('runnable');

    await rt.run({ provider });
    expect(provider.calls).toBe(2);
    expect(await rt.process(p.pid)).toMatchObject({ status: 'exited' });
  });
});
