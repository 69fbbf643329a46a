import { completePendingAction } from '../processes/pending-actions.js';
import type { TxScope } from '../store/transaction.js';
import type { CallState } from './call-state.js';

/**
 * Step 4, in the call's transaction: a fresh call charges one tool call to the pid and every ancestor (else
 * `resource_limit_exceeded`); a saved call was charged when it was first made, and completes its saved action instead.
 */
export async function charge(call: CallState, scope: TxScope): Promise<void> {
  switch (call.entry.kind) {
    case 'fresh':
      await call.deps.engine.budgets(scope).charge(call.pid, { tool_calls: 1 });
      return;
    case 'saved':
      await completePendingAction(scope.store, call.pid, call.entry.token);
      return;
  }
}
