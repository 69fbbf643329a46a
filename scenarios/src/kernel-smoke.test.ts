import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, expect, it } from 'vitest';

let rt: Runtime;
afterEach(async () => rt?.close());

it('[K-16] a parent spawns a child, waits on it, and both exit under the scheduler', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  const parent = await rt.spawn({ goal: 'delegate' });
  await rt.grant(parent.pid, 'skill:*', ['execute']);
  await rt.grant(parent.pid, 'process:spawn', ['write']);
  const provider = new ScriptedProvider({
      processes: {
        [parent.pid]: [
          [{ tool: 'activate_skill', args: { skill_id: 'agent-libos-child-processes' } }],
          [{ tool: 'spawn_child_process', args: { goal: 'do the work' } }],
          [{ tool: 'wait_child_process', args: { child_pid: 'pid_' + (0x0b).toString(16).padStart(16, '0') } }],
          [{ tool: 'process_exit', args: { message: 'parent done' } }],
        ],
        '*': [[{ tool: 'process_exit', args: { payload: { answer: 42 } } }]],
      },
  });
  const report = await rt.run({ provider, maxQuanta: 20 });
  const all = await rt.processes();
  expect(report.idle).toBe(true);
  expect(all.map((p) => p.status)).toEqual(['exited', 'exited']);
  const child = all.find((p) => p.parentPid === parent.pid)!;
  expect(child.pid).toBe('pid_000000000000000b');
  const waited = report.results.find((r) => r.executed[0] === 'wait_child_process')!;
  expect(waited.results[0]).toMatchObject({ ok: true, payload: { ready: true, status: 'exited', result_oid: child.outcome!.result_oid } });
  expect(provider.calls).toBe(5);
});
