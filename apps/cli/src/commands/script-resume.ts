import { DEFAULT_SCRIPT_KEY, type LlmScript, type ScriptedTurn } from '@libos/kernel';

/**
 * Continues a script where earlier runs on the same store left off. A `ScriptedProvider` keeps its cursors in
 * memory, so a second `libos run` (after a human answer, say) would start every process from turn 0 again. The
 * store records every model call, so the turns a process already consumed are known: `consumed(pid)` is the
 * number of its recorded scripted model calls (one per turn, including corrective retries).
 *
 * - `{ processes }`: each pid with consumed turns gets its own queue (its key, else a copy of `"*"`), minus those;
 * - a shared queue (array or `{ turns }`): minus the turns every process consumed together.
 *
 * @example
 * resumeScript({ processes: { '*': [[a], [b]] } }, ['pid_1'], () => 1); // { processes: { '*': [[a], [b]], pid_1: [[b]] } }
 */
export function resumeScript(script: LlmScript, pids: readonly string[], consumed: (pid: string) => number): LlmScript {
  if (Array.isArray(script) || 'turns' in script) {
    const turns: ScriptedTurn[] = Array.isArray(script) ? script : script.turns;
    const used = pids.reduce((n, pid) => n + consumed(pid), 0);
    return turns.slice(used);
  }
  const queues: Record<string, ScriptedTurn[]> = { ...script.processes };
  for (const pid of pids) {
    const used = consumed(pid);
    if (used === 0) continue;
    const own = Object.hasOwn(script.processes, pid) ? script.processes[pid]! : (script.processes[DEFAULT_SCRIPT_KEY] ?? []);
    queues[pid] = own.slice(used);
  }
  return { processes: queues };
}
