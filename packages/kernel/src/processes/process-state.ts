import { LibosError, type WaitSpec } from '@libos/sdk';
import type { ProcessStatus } from './process-record.js';

/** The wait a non-runnable process carries. Typed: each waiting status admits only its kinds. */
export type WaitState = WaitSpec | { readonly kind: 'paused'; readonly reason?: string } | { readonly kind: 'tool'; readonly operation_id: string };

/** How a terminal process ended. */
export type Outcome =
  | { readonly kind: 'exited'; readonly result_oid: string | null }
  | { readonly kind: 'failed'; readonly result_oid?: string | null; readonly code?: string; readonly message?: string }
  | { readonly kind: 'killed'; readonly reason?: string; readonly code?: string };

const WAIT_KINDS: Partial<Record<ProcessStatus, readonly string[]>> = {
  waiting_event: ['child', 'message'],
  waiting_human: ['human'],
  waiting_tool: ['tool'],
  paused: ['paused'],
};
const OUTCOME_KIND: Partial<Record<ProcessStatus, string>> = { exited: 'exited', failed: 'failed', killed: 'killed' };

/**
 * The one write boundary's invariant (kernel spec §1): waiting_event ⇔ a child or message wait; waiting_human ⇔ a
 * human wait with at least one unique request id; paused ⇔ a paused wait; exited/failed/killed ⇔ their outcome;
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
    if (wait && wait.kind === 'human' && (wait.request_ids.length === 0 || new Set(wait.request_ids).size !== wait.request_ids.length)) bad('needs at least one unique human request id');
  } else if (wait) bad(`carries no wait (got ${wait.kind})`);
  if (outcomeKind) {
    if (!outcome || outcome.kind !== outcomeKind) bad(`needs an outcome of kind ${outcomeKind}`);
  } else if (outcome) bad(`carries no outcome (got ${outcome.kind})`);
}

/** The status a wait puts its process in. */
export function statusForWait(wait: WaitSpec): ProcessStatus {
  return wait.kind === 'human' ? 'waiting_human' : 'waiting_event';
}
