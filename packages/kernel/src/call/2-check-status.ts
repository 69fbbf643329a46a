import { LibosError } from '@libos/sdk';
import { TOOL_CALLABLE_STATUSES } from '../processes/process-record.js';
import type { ResolvedCall } from './call-state.js';
import { hooksAt, type CallHook } from './hooks.js';

/** Step 2: the caller's status allows tool calls; then every hook may refuse the call (e.g. unread interrupts). */
export async function checkStatus(call: ResolvedCall, hooks: readonly CallHook[]): Promise<void> {
  const { status } = call.process;
  if (!TOOL_CALLABLE_STATUSES.has(status)) {
    throw new LibosError(
      'process_not_tool_callable',
      `process ${call.pid} is ${status}; tools can be called only while it is runnable or running`,
      { details: { pid: call.pid, status } },
    );
  }
  for (const h of hooksAt(hooks, 'admit')) await h.admit(call);
}
