import { LibosError } from '@libos/sdk';
import type { ProcessInfo } from '../processes/process-record.js';
import { findProcess } from '../processes/process-store.js';
import type { CallState, ResolvedCall } from './call-state.js';

/** The caller's process row, read once for the whole call; null when there is no such process. */
export const readCaller = (call: CallState): Promise<ProcessInfo | null> => findProcess(call.deps.db, call.pid);

/** The refusal of a call whose caller does not exist (nothing can be audited as it). */
export const processNotFound = (pid: string): LibosError =>
  new LibosError('process_not_found', `process ${pid} does not exist`, { details: { pid } });

/** Step 1: the name is in the caller's tool table, else `tool_not_in_process_table`. */
export function resolveTool(call: CallState, process: ProcessInfo): ResolvedCall {
  const reg = call.deps.registry.tools.get(call.toolName);
  if (!reg || !process.visibleTools.includes(call.toolName)) {
    const hint = reg ? ` (activate skill ${reg.skill} to see it)` : ' (no such tool is registered)';
    throw new LibosError(
      'tool_not_in_process_table',
      `tool ${JSON.stringify(call.toolName)} is not in the tool table of ${call.pid}${hint}`,
      {
        details: { tool: call.toolName, pid: call.pid, ...(reg ? { skill: reg.skill } : {}) },
      },
    );
  }
  return { ...call, process, tool: reg.tool };
}
