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

/** A point of the call path where hooks run (a method of `CallHook`). */
export type HookPoint = 'admit' | 'admitParsed' | 'started' | 'completed' | 'settled' | 'notices';

const AT_POINT = new WeakMap<readonly CallHook[], Map<HookPoint, readonly CallHook[]>>();

/**
 * The hooks of `hooks` that implement `point`, in registration order, found once per hook list: a call awaited every
 * registered hook at every point, and awaiting a hook that has no such method still cost a promise and a turn of the
 * microtask queue (35 of a call's 209 promises). A hook list is read once, at its first use: pass a new array
 * rather than changing one already used.
 *
 * @example
 * declare const call: ResolvedCall;
 * declare const hooks: readonly CallHook[];
 * for (const h of hooksAt(hooks, 'admit')) await h.admit(call);
 */
export function hooksAt<P extends HookPoint>(hooks: readonly CallHook[], point: P): readonly (CallHook & Required<Pick<CallHook, P>>)[] {
  let byPoint = AT_POINT.get(hooks);
  if (!byPoint) AT_POINT.set(hooks, (byPoint = new Map()));
  let at = byPoint.get(point);
  if (!at) byPoint.set(point, (at = hooks.filter((h) => h[point] !== undefined)));
  return at as readonly (CallHook & Required<Pick<CallHook, P>>)[];
}
