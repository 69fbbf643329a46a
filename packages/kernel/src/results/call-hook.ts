import { SERVICE_NAMES } from '@libos/sdk';
import type { CallHook } from '../call/hooks.js';
import { TERMINAL_PROCESS_STATUSES } from '../processes/process-record.js';
import { getProcess } from '../processes/process-store.js';
import { publishToolResult } from './publish-result.js';

/**
 * Result publishing on the call path: a model's call (turns are stateless, so results reach the model through its
 * view) publishes its result as `tool_result:<call_id>`, owned by the pid and rooted in its MemoryView, in the call's
 * transaction. Host calls return their envelope and publish nothing; a runner's result is its observer's to publish.
 */
export const resultsCallHook: CallHook = {
  name: 'results',
  async completed(call, scope, done) {
    if (call.origin.kind !== 'model' || !call.deps.registry.services.has(SERVICE_NAMES.objects)) return;
    // A call that ended its process (process_exit) has nobody left to read its result.
    const row = await getProcess(scope.store, call.pid);
    if (TERMINAL_PROCESS_STATUSES.has(row.status)) return;
    await publishToolResult(scope, {
      pid: call.pid,
      name: `tool_result:${call.callId}`,
      title: `${call.toolName} result`,
      fields: { tool: call.toolName, call_id: call.callId },
      resultField: 'payload',
      result: done.payload,
      // The result carries everything the call observed: its labels never fall below the call's flow.
      labels: await done.ctx.flow.labels(),
      sourceOids: done.ctx.flow.sources(),
    });
  },
};
