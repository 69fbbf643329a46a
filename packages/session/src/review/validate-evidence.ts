import type { CompletionEvidence } from './completion-evidence.js';
import type { ReviewState } from './review-state.js';

/** The parts of a review state that validation reads. */
export type ValidationState = Pick<
  ReviewState,
  'reviewToken' | 'goal' | 'ackedIds' | 'unreadIds' | 'expectedSourceRefs' | 'observedTools' | 'hints'
>;

const list = (xs: Iterable<string>) => [...xs].join(', ');

/**
 * Validates a review-gated exit against the current review state. Returns every error, in the spec's order (empty:
 * the exit may commit): unread human messages; a missing or stale token; missing evidence (which ends the list);
 * goal_oid; reviewed_message_ids; unmet explicit tool hints; per check, unknown refs then missing or unobserved tools;
 * coverage of every expected ref; final_verification.
 *
 * @example
 * declare const state: ValidationState;
 * validateCompletion(state, undefined, undefined);
 * // ['review_token is missing or stale: …', 'completion_evidence must be a structured object …']
 */
export function validateCompletion(state: ValidationState, token: string | undefined, evidence: CompletionEvidence | undefined): string[] {
  const errors: string[] = [];
  if (state.unreadIds.length > 0) {
    errors.push(
      `read and acknowledge every unread human message before exit (read_process_messages with these message_ids, ` +
        `ack=true), then probe again: ${list(state.unreadIds)}`,
    );
  }
  if (token !== state.reviewToken) {
    errors.push(
      'review_token is missing or stale: call process_exit alone without a token for a fresh review and submit only its review_token',
    );
  }
  if (evidence === undefined) {
    errors.push(
      'completion_evidence must be a structured object with goal_oid, reviewed_message_ids, acceptance_checks ' +
        'and final_verification (see required_evidence_shape)',
    );
    return errors;
  }
  if (evidence.goal_oid !== state.goal.oid) {
    errors.push(`completion_evidence.goal_oid must be the reviewed goal ${state.goal.oid} (got ${JSON.stringify(evidence.goal_oid)})`);
  }
  const acked = new Set(state.ackedIds);
  const reviewed = evidence.reviewed_message_ids;
  if (reviewed.length !== state.ackedIds.length || new Set(reviewed).size !== reviewed.length || reviewed.some((id) => !acked.has(id))) {
    errors.push(
      `completion_evidence.reviewed_message_ids must list exactly the ${state.ackedIds.length} acknowledged_human_message_ids, ` +
        `each once (got ${reviewed.length})`,
    );
  }
  if (state.hints.length > 0) {
    errors.push(`explicit goal requirements still need successful tool calls: ${list(state.hints)}`);
  }
  const known = new Set(state.expectedSourceRefs);
  const observed = new Set(state.observedTools);
  const covered = new Set<string>();
  evidence.acceptance_checks.forEach((check, i) => {
    const unknown = check.source_refs.filter((r) => !known.has(r));
    if (unknown.length > 0) errors.push(`acceptance_checks[${i}].source_refs contains unknown references: ${list(unknown)}`);
    for (const r of check.source_refs) if (known.has(r)) covered.add(r);
    const unobserved = check.evidence_tool_calls.filter((t) => !observed.has(t));
    if (check.status === 'completed' && check.evidence_tool_calls.length === 0) {
      errors.push(
        `acceptance_checks[${i}].evidence_tool_calls must cite evidence for completed work: name the observed successful tools that did it`,
      );
    } else if (unobserved.length > 0) {
      const observed = list(state.observedTools) || 'none';
      errors.push(`acceptance_checks[${i}].evidence_tool_calls cites unobserved tools: ${list(unobserved)} (observed: ${observed})`);
    }
  });
  const missing = state.expectedSourceRefs.filter((r) => !covered.has(r));
  if (missing.length > 0) {
    errors.push(`acceptance checks do not cover every expected_source_ref: ${list(missing)}`);
  }
  const unverified = evidence.final_verification.filter((t) => !observed.has(t));
  if (unverified.length > 0) {
    errors.push(`completion_evidence.final_verification cites unobserved tools: ${list(unverified)}`);
  }
  return errors;
}
