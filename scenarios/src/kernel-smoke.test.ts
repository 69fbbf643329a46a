import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type LlmProvider, type LlmRequest, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { afterEach, expect, it } from 'vitest';

let rt: Runtime;
afterEach(async () => rt?.close());

it('[K-16] a parent spawns a child, waits on it, and both exit under the scheduler', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()] });
  const parent = await rt.spawn({ goal: 'delegate' });
  await rt.grant(parent.pid, 'skill:*', ['execute']);
  await rt.grant(parent.pid, 'process:spawn', ['write']);
  const script = new ScriptedProvider({
    processes: {
      [parent.pid]: [
        [{ tool: 'activate_skill', args: { skill_id: 'agent-libos-child-processes' } }],
        [{ tool: 'spawn_child_process', args: { goal: 'do the work' } }],
        [{ tool: 'wait_child_process', args: { child_pid: '{{child}}' } }],
        [{ tool: 'process_exit', args: { message: 'parent done' } }],
      ],
      '*': [[{ tool: 'process_exit', args: { payload: { answer: 42 } } }]],
    },
  });
  // The "model" learns its child's pid from the runtime, as a real one would from the spawn result.
  let calls = 0;
  const provider: LlmProvider = {
    name: 'scripted',
    model: 'scripted',
    async completeAction(req: LlmRequest) {
      calls++;
      const r = await script.completeAction(req);
      const child = (await rt.processes()).find((p) => p.parentPid === parent.pid)?.pid;
      return {
        ...r,
        toolCalls: r.toolCalls.map((c) =>
          c.arguments.child_pid === '{{child}}' ? { ...c, arguments: { ...c.arguments, child_pid: child } } : c,
        ),
      };
    },
  };
  const report = await rt.run({ provider, maxQuanta: 20 });
  const all = await rt.processes();
  expect(report.idle).toBe(true);
  expect(all.map((p) => p.status)).toEqual(['exited', 'exited']);
  const child = all.find((p) => p.parentPid === parent.pid)!;
  const waited = report.results.find((r) => r.executed[0] === 'wait_child_process')!;
  expect(waited.results[0]).toMatchObject({ ok: true, payload: { ready: true, status: 'exited', result_oid: child.outcome!.result_oid } });
  expect(calls).toBe(5);
});
