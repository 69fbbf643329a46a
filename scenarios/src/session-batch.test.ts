// Calls in one batch (docs/behaviour/session.md S-B*): a model reply's calls run in order and the batch stops at
// the first exit, wait, failure, interrupt or notice; the calls after the stop never run, not even after a resume.
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { objectNames, StateProvider } from './support/kernel-harness.js';
import { openHarness, spawnProbe, type Harness } from './support/kernel-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
});

const create = (name: string) => ({ tool: 'create_memory_object', args: { type: 'observation', name, payload: { name } } });
const exit = (message = 'done') => ({ tool: 'process_exit', args: { message } });

/** The tools `pid` called, in order, by their `tool.call` audit rows (a call that never ran has none). */
async function calledTools(rt: Runtime, pid: string): Promise<string[]> {
  return (await rt.audit({ pid, action: 'tool.call', limit: 1000 })).map((a) => a.target!.replace(/^tool:/, ''));
}

describe('a batch of calls in one reply', () => {
  it('[S-B2] [process_exit, create]: one call runs; the batch stops as process_terminal and the create never runs', async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'exit first');
    const report = await rt.run({ provider: new ScriptedProvider({ processes: { [pid]: [[exit(), create('too-late')]] } }) });
    expect(report.results).toHaveLength(1);
    expect(report.results[0]).toMatchObject({
      stopReason: 'process_terminal',
      executed: ['process_exit'],
      skipped: ['create_memory_object'],
    });
    expect((await rt.process(pid)).status).toBe('exited');
    expect(await calledTools(rt, pid)).toEqual(['process_exit']);
    const batch = await rt.audit({ pid, action: 'llm.action_batch' });
    expect(batch.map((b) => b.details)).toEqual([expect.objectContaining({ stop_reason: 'process_terminal', executed: ['process_exit'] })]);
  });

  it('[S-B3] [create, wait_child_process, process_exit]: the process waits; the exit never runs, not even after the resume', async () => {
    h = await openHarness();
    const { rt } = h;
    const parent = await spawnProbe(rt, 'wait for the child');
    const child = await spawnProbe(rt, 'finish', parent);
    const provider = new ScriptedProvider({
      processes: {
        [parent]: [
          [create('before-wait'), { tool: 'wait_child_process', args: { child_pid: child } }, exit('in the first batch')],
          [create('after-wait')],
        ],
        [child]: [[exit('child done')]],
      },
    });
    const first = await rt.run({ provider, maxQuanta: 1 });
    expect(first.results[0]).toMatchObject({
      pid: parent,
      stopReason: 'waiting_child',
      executed: ['create_memory_object', 'wait_child_process'],
      skipped: ['process_exit'],
    });
    expect(await rt.process(parent)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'child', child_pid: child } });

    const rest = await rt.run({ provider, maxQuanta: 3 });
    const resumed = rest.results.find((q) => q.pid === parent && q.kind === 'resumed')!;
    expect(resumed).toMatchObject({ executed: ['wait_child_process'], skipped: [] });
    // The next turn is a new model reply; the skipped exit of the first batch was never replayed.
    expect(await rt.process(parent)).toMatchObject({ status: 'runnable' });
    expect(await calledTools(rt, parent)).toEqual([
      'create_memory_object',
      'wait_child_process',
      'wait_child_process',
      'create_memory_object',
    ]);
    expect(await objectNames(rt, parent)).toEqual(['after-wait', 'before-wait', 'goal']);
  });

  it('[S-B5] [get_current_time with a bad zone, process_exit]: the batch stops as tool_failed and the process stays runnable', async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'read a bad clock');
    await rt.grant(pid, 'clock:now', ['read']);
    const provider = new ScriptedProvider({
      processes: { [pid]: [[{ tool: 'get_current_time', args: { timezone: 'Mars/Olympus' } }, exit()]] },
    });
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ stopReason: 'tool_failed', executed: ['get_current_time'], skipped: ['process_exit'] });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: false, error: { code: 'invalid_timezone' } });
    expect((await rt.process(pid)).status).toBe('runnable');
    expect(await calledTools(rt, pid)).toEqual(['get_current_time']);
  });

  it(`[S-B6] an unread interrupt refuses the first call of the batch: nothing runs and the stop reason is \
interrupted_by_message`, async () => {
    h = await openHarness();
    const { rt, probe } = h;
    const pid = await spawnProbe(rt, 'be interrupted');
    await rt.sendMessage(pid, { text: 'stop now' }, { delivery: 'interrupt' });
    const provider = new ScriptedProvider({ processes: { [pid]: [[{ tool: 'probe_touch', args: { label: 'first' } }, exit()]] } });
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ stopReason: 'interrupted_by_message', skipped: ['process_exit'] });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: false, error: { code: 'interrupted_by_message' } });
    expect(probe.runs).toEqual([]);
    expect(await rt.events({ pid, type: 'probe_touched' })).toEqual([]);
    expect((await rt.process(pid)).status).toBe('runnable');
    expect((await rt.messages(pid)).map((m) => m.status)).toEqual(['unread']);
  });

  it(`[S-B9] a message that arrives after the prompt was built stops the batch with message_notice after the call it follows; the exit \
never runs`, async () => {
    h = await openHarness();
    const { rt, probe } = h;
    const pid = await spawnProbe(rt, 'work, then exit');
    let posted = '';
    // The message lands while the model answers: the prompt did not show it, the first call's result carries it.
    const provider = new StateProvider(async (_pid, n) => {
      if (n > 0) return [];
      posted = (await rt.sendMessage(pid, { text: 'wait, one more thing' }, { from: 'human:owner' })).messageId;
      return [{ tool: 'probe_touch', args: { label: 'work' } }, exit()];
    });
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ stopReason: 'message_notice', executed: ['probe_touch'], skipped: ['process_exit'] });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: true, notices: [{ kind: 'message_notice', message_ids: [posted] }] });
    expect(probe.runs).toEqual(['work']);
    expect((await rt.process(pid)).status).toBe('runnable');
    expect(await calledTools(rt, pid)).toEqual(['probe_touch']);
  });
});
