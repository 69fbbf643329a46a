import { LibosError, type SavedCallWait, type WaitSpec } from '@libos/sdk';
import type { ProcessStatus } from './process-record.js';

/** The wait a non-runnable process carries. Typed: each waiting status admits only its kinds. */
export type WaitState = SavedCallWait | { readonly kind: 'paused'; readonly reason?: string };

/**
 * The wait of one kind, typed, or null when the state is another (or none).
 *
 * @example
 * waitOfKind({ kind: 'timer', started_at: 't0', deadline: 't1' }, 'timer')?.deadline; // 't1'
 */
export function waitOfKind<K extends WaitState['kind']>(
  state: Readonly<Record<string, unknown>> | null | undefined,
  kind: K,
): Extract<WaitState, { readonly kind: K }> | null {
  return state?.kind === kind ? (state as Extract<WaitState, { readonly kind: K }>) : null;
}

/** How a terminal process ended. */
export type Outcome =
  | { readonly kind: 'exited'; readonly result_oid: string | null }
  | { readonly kind: 'failed'; readonly result_oid?: string | null; readonly code?: string; readonly message?: string }
  | { readonly kind: 'killed'; readonly reason?: string; readonly code?: string };

const WAIT_KINDS: Partial<Record<ProcessStatus, readonly string[]>> = {
  waiting_event: ['child', 'message', 'task', 'timer'],
  waiting_human: ['human'],
  waiting_tool: ['tool'],
  paused: ['paused'],
};
const OUTCOME_KIND: Partial<Record<ProcessStatus, string>> = { exited: 'exited', failed: 'failed', killed: 'killed' };

const nonEmptyString = (v: unknown) => typeof v === 'string' && v !== '';

/** What is wrong with the fields of a wait of a known kind, or null. */
function waitShapeError(wait: WaitState): string | null {
  const w: Readonly<Record<string, unknown>> = wait;
  if (wait.kind === 'child') return nonEmptyString(w.child_pid) ? null : 'needs a child wait with a child_pid';
  if (wait.kind === 'message')
    return w.filters !== null && typeof w.filters === 'object' && !Array.isArray(w.filters)
      ? null
      : 'needs a message wait with a filters object';
  if (wait.kind === 'tool') return nonEmptyString(w.operation_id) ? null : 'needs a tool wait with an operation_id';
  if (wait.kind === 'timer')
    return nonEmptyString(w.started_at) && nonEmptyString(w.deadline) && !Number.isNaN(Date.parse(w.deadline as string))
      ? null
      : 'needs a timer wait with started_at and an ISO deadline';
  if (wait.kind === 'task')
    return nonEmptyString(w.task_id) && (w.deadline === undefined || nonEmptyString(w.deadline))
      ? null
      : 'needs a task wait with a task_id (and an ISO deadline, if any)';
  if (wait.kind === 'human') {
    const ids = w.request_ids;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every(nonEmptyString) || new Set(ids).size !== ids.length)
      return 'needs at least one unique human request id';
  }
  return null;
}

/**
 * The one write boundary's invariant (K-15): waiting_event ⇔ a child wait (with its child_pid), a
 * message wait (with a filters object) or a task wait (with its task_id); waiting_human ⇔ a human wait with at least one unique request id;
 * waiting_tool ⇔ a tool wait with its operation_id; paused ⇔ a paused wait; exited/failed/killed ⇔ their outcome;
 * every other status carries neither. Throws `internal_error` naming the mismatch.
 */
export function assertStateShape(status: ProcessStatus, wait: WaitState | null, outcome: Outcome | null): void {
  const waitKinds = WAIT_KINDS[status];
  const outcomeKind = OUTCOME_KIND[status];
  const bad = (why: string) => {
    throw new LibosError('internal_error', `invalid process state: status ${status} ${why}`, { details: { status, wait, outcome } });
  };
  if (waitKinds) {
    if (!wait || !waitKinds.includes(wait.kind)) bad(`needs a wait of kind ${waitKinds.join('|')} (got ${wait ? wait.kind : 'none'})`);
    const why = wait ? waitShapeError(wait) : null;
    if (why) bad(why);
  } else if (wait) bad(`carries no wait (got ${wait.kind})`);
  if (outcomeKind) {
    if (!outcome || outcome.kind !== outcomeKind) bad(`needs an outcome of kind ${outcomeKind}`);
  } else if (outcome) bad(`carries no outcome (got ${outcome.kind})`);
}

/** The status a wait puts its process in. */
export function statusForWait(wait: WaitSpec): ProcessStatus {
  return wait.kind === 'human' ? 'waiting_human' : 'waiting_event';
}
