import type { LibosError, ToolContext, WaitSpec } from '@libos/sdk';
import type { ToolNotice } from '../broker/tool-result.js';
import type { TxScope } from '../store/transaction.js';
import type { CallSettlement, CallState, ParsedCall, ResolvedCall } from './call-state.js';

/**
 * What a subsystem adds to the call path, at the steps of DESIGN.md's seven. The pipeline runs every registered hook at
 * each point, in registration order; a hook decides from the CallState whether the call concerns it. A hook throws a
 * `LibosError` to refuse (before the run) or to fail the call (inside its transaction: everything rolls back).
 */
export interface CallHook {
  readonly name: string;
  /** Step 2, after the status check: may refuse the call before its arguments are parsed (e.g. unread interrupts). */
  admit?(call: ResolvedCall): Promise<void>;
  /** Step 3, once the arguments parsed: may refuse the call before it is charged (e.g. a rejected approval). */
  admitParsed?(call: ParsedCall): Promise<void>;
  /** Step 5, in the call's transaction, before the tool runs. */
  started?(call: ParsedCall, scope: TxScope): Promise<void>;
  /** Step 6, the tool returned: in its transaction, before the completion's event and audit (e.g. publish the result). */
  completed?(call: ParsedCall, scope: TxScope, done: { readonly payload: unknown; readonly ctx: ToolContext }): Promise<void>;
  /** Step 6: how the call settled (succeeded, waiting, failed), in the transaction that records it. */
  settled?(call: CallState, scope: TxScope, how: CallSettlement): Promise<void>;
  /**
   * A run that failed with an error this hook claims parks instead: in a transaction of its own (the run's rolled
   * back), after the charge, `write` records the wait and returns it (e.g. `approval_required` → a human request).
   */
  readonly park?: {
    claims(err: LibosError): boolean;
    write(call: ParsedCall, err: LibosError, scope: TxScope): Promise<WaitSpec>;
  };
  /** Step 7: notices attached to a completed call's envelope (e.g. unread mail). */
  notices?(call: CallState): Promise<readonly ToolNotice[]>;
}
