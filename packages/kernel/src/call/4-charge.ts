import { completePendingAction } from '../processes/pending-actions.js';
import { sendDeferredWrites } from '../store/deferred-writes.js';
import type { TxScope } from '../store/transaction.js';
import type { ParsedCall } from './call-state.js';

/**
 * Step 4, in the call's transaction: a fresh call charges one tool call to the pid and every ancestor (else
 * `resource_limit_exceeded`); a saved call was charged when it was first made, and completes its saved action instead.
 */
export async function charge(call: ParsedCall, scope: TxScope): Promise<void> {
  switch (call.entry.kind) {
    case 'fresh':
      await call.deps.engine.budgets(scope).charge(call.pid, { tool_calls: 1 });
      // A tool that acts outside the store runs only once its charge is on the server (K-15.23).
      if (call.tool.policy?.sideEffects === true && call.deps.defersGuards) await sendDeferredWrites(scope.store);
      return;
    case 'saved':
      await completePendingAction(scope.store, call.pid, call.entry.token);
      return;
  }
}
