import { LibosError, resources, type WaitSpec } from '@libos/sdk';
import { discardPendingAction, savePendingAction } from '../processes/pending-actions.js';
import { statusForWait } from '../processes/process-state.js';
import { transition } from '../processes/transition.js';
import { isDeferredMiss } from '../store/deferred-writes.js';
import { inTransaction, type TxScope } from '../store/transaction.js';
import { charge } from './4-charge.js';
import { runTool, type FailureWrite } from './5-run.js';
import { isParsed, isSavedCall, jsonDigest, type CallOutcome, type CallSettlement, type CallState, type ParsedCall } from './call-state.js';
import { hooksAt, type CallHook } from './hooks.js';

/**
 * One of the call's final savepoints (its result or wait, a parked call, a failure record): when it ends well it is
 * the call's last write (step 7 only reads), so in the call's own unit it may carry the COMMIT (K-15.21).
 */
const finalWrite = <T>(call: CallState, fn: (scope: TxScope) => Promise<T>): Promise<T> =>
  inTransaction(call.deps.db, call.deps.scopes, call.pid, call.callId, fn, { last: true });

const settle = async (hooks: readonly CallHook[], call: CallState, scope: TxScope, how: CallSettlement) => {
  for (const h of hooksAt(hooks, 'settled')) await h.settled(call, scope, how);
};

/** The audit fields naming a call's arguments: the parsed arguments' digest, or (refused before they parsed) the raw ones'. */
function argsFields(call: CallState): Record<string, unknown> {
  if (isParsed(call)) return { args_sha256: call.argsDigest.sha256, args_bytes: call.argsDigest.bytes };
  const raw = jsonDigest(call.rawArgs);
  return { args_sha256: null, args_bytes: null, raw_args_sha256: raw.sha256, raw_args_bytes: raw.bytes };
}

/**
 * Step 6: charge (4) and run (5) in one store transaction, and commit with them the call's record: for a result,
 * the hooks' `completed` (e.g. the published result), `tool_completed` and the `ok` audit row; for a wait, the saved
 * call, the wait state, `tool_waiting` and the `waiting` audit row; then the hooks' `settled`. A failure rolls all of
 * it back: a hook that claims the error parks the call instead, else the failure is recorded on its own.
 */
export async function commitCall(call: ParsedCall, hooks: readonly CallHook[]): Promise<CallOutcome> {
  const { pid, callId, toolName } = call;
  // The tool's signal (aborted when the call fails) is made only if the tool reads it.
  let controller: AbortController | undefined;
  let signal: AbortSignal | undefined;
  let failed = false;
  const signalOf = (): AbortSignal => {
    if (!signal) {
      controller = new AbortController();
      signal = call.signal ? AbortSignal.any([call.signal, controller.signal]) : controller.signal;
      if (failed) controller.abort();
    }
    return signal;
  };
  let stage = 'charge' as 'charge' | 'run';
  const failureWrites: FailureWrite[] = [];
  try {
    return await finalWrite(call, async (scope): Promise<CallOutcome> => {
      await charge(call, scope);
      stage = 'run';
      const ran = await runTool(call, scope, hooks, signalOf, failureWrites);
      if (ran.kind === 'waiting') {
        await recordWait(call, scope, ran.wait, ran.resumeArgs);
        await settle(hooks, call, scope, { kind: 'waiting', wait: ran.wait });
        return ran;
      }
      const result = jsonDigest(ran.payload);
      for (const h of hooksAt(hooks, 'completed')) await h.completed(call, scope, ran);
      await scope.events.emit('tool_completed', { pid, call_id: callId, tool: toolName, result_sha256: result.sha256 });
      const details = { ...argsFields(call), result_sha256: result.sha256, result_bytes: result.bytes, resumed: isSavedCall(call) };
      await scope.audit.record({ action: 'tool.call', target: resources.tool(toolName), decision: 'ok', details });
      await settle(hooks, call, scope, { kind: 'succeeded', payload: ran.payload ?? null, flow: ran.ctx.flow });
      return ran;
    });
  } catch (err) {
    failed = true;
    controller?.abort();
    const e = LibosError.from(err);
    // A deferred charge that missed (K-15.23) was refused wherever the unit learnt it: the run never counted.
    if (isDeferredMiss(err)) stage = 'charge';
    const parker = stage === 'run' ? hooks.find((h) => h.park?.claims(e)) : undefined;
    if (parker) return parkCall(call, hooks, parker, e);
    // A refused charge charged nothing; a failed run still costs the attempt (a saved call was charged already).
    return recordFailure(call, hooks, e, stage === 'run' && !isSavedCall(call), failureWrites);
  }
}

/**
 * A tool asked to wait: the call is saved durably (with the arguments it asked to resume with, if any) and its
 * process parked, in the call's transaction.
 */
async function recordWait(call: ParsedCall, scope: TxScope, wait: WaitSpec, resumeArgs?: Readonly<Record<string, unknown>>): Promise<void> {
  const now = scope.clock.now().toISOString();
  const args = resumeArgs ?? call.args;
  await savePendingAction(scope.store, { pid: call.pid, callId: call.callId, tool: call.toolName, args, wait }, now);
  await transition(scope.store, call.pid, { from: ['runnable', 'running'], to: statusForWait(wait), wait }, now);
  await scope.events.emit('tool_waiting', { pid: call.pid, call_id: call.callId, tool: call.toolName, wait });
  await scope.audit.record({
    action: 'tool.call',
    target: resources.tool(call.toolName),
    decision: 'waiting',
    details: { ...argsFields(call), wait },
  });
}

/**
 * A hook claimed the run's failure: in a transaction of its own the call is charged again (step 4: the run's charge
 * rolled back with it) and the hook records the wait. A new call while another is saved (`call_already_waiting`)
 * is refused like any failed run.
 */
async function parkCall(call: ParsedCall, hooks: readonly CallHook[], parker: CallHook, e: LibosError): Promise<CallOutcome> {
  try {
    const wait = await finalWrite(call, async (scope) => {
      await charge(call, scope);
      const w = await parker.park!.write(call, e, scope);
      await settle(hooks, call, scope, { kind: 'waiting', wait: w });
      return w;
    });
    return { kind: 'waiting', wait };
  } catch (parkErr) {
    if (!(parkErr instanceof LibosError && parkErr.code === 'call_already_waiting')) throw parkErr;
    return recordFailure(call, hooks, parkErr, !isSavedCall(call));
  }
}

/**
 * A failed call leaves none of its writes; its failure is recorded in a transaction of its own: the attempt's charge
 * (when it ran), the settlement of a saved call (its action, still `resuming` since the call rolled back, is gone with
 * this record, so no later quantum finds it claimed), `tool_failed`, the audit row, and the hooks' `settled`.
 */
export async function recordFailure(
  call: CallState,
  hooks: readonly CallHook[],
  e: LibosError,
  chargeAttempt: boolean,
  failureWrites: readonly FailureWrite[] = [],
): Promise<CallOutcome> {
  const { deps, pid, callId, toolName } = call;
  await finalWrite(call, async (scope) => {
    let charged = false;
    if (chargeAttempt) {
      try {
        await deps.engine.budgets(scope).charge(pid, { tool_calls: 1 });
        charged = true;
      } catch (chargeErr) {
        // The budget ran out between the attempt and this record: the failure is still audited, uncharged.
        if (!(chargeErr instanceof LibosError && chargeErr.code === 'resource_limit_exceeded')) throw chargeErr;
      }
    }
    if (call.entry.kind === 'saved') await discardPendingAction(scope.store, pid, call.entry.token);
    // What the tool asked to keep if it failed (ctx.onFailure), e.g. a job marked failed.
    for (const write of failureWrites) await write(scope, e.toJSON());
    await scope.events.emit('tool_failed', { pid, call_id: callId, tool: toolName, code: e.code });
    const details = { ...argsFields(call), charged, resumed: isSavedCall(call), error: e.toJSON() };
    await scope.audit.record({ action: 'tool.call', target: resources.tool(toolName), decision: e.code, details });
    await settle(hooks, call, scope, { kind: 'failed', error: e.toJSON() });
  });
  return { kind: 'failed', error: e };
}
