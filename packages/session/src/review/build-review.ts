import { ACKNOWLEDGED_MESSAGES_REFERENCE, type GoalReference } from './review-references.js';
import type { ReviewState } from './review-state.js';

/** The review a gated `process_exit` returns instead of exiting (schema_version 2). Bodies are never inlined. */
export interface CompletionReview {
  readonly schema_version: 2;
  readonly review_token: string;
  readonly goal: {
    readonly oid: string;
    readonly version: number;
    readonly payload_sha256: string;
    readonly source: 'object_memory';
    readonly reference: GoalReference;
  };
  readonly expected_source_refs: readonly string[];
  readonly acknowledged_human_message_count: number;
  readonly acknowledged_human_message_ids: readonly string[];
  readonly acknowledged_human_message_sha256: string;
  readonly acknowledged_human_message_reference: typeof ACKNOWLEDGED_MESSAGES_REFERENCE;
  readonly unread_human_message_ids: readonly string[];
  readonly observed_successful_tool_calls: readonly string[];
  readonly explicit_unobserved_tool_hints: readonly string[];
  readonly required_evidence_shape: Readonly<Record<string, unknown>>;
  readonly instructions: readonly string[];
  readonly validation_errors: readonly string[];
  readonly task_run: null;
}

function instructionsFor(state: ReviewState): string[] {
  const out = ['This is not an exit: the process is still live. Only status "exited" confirms completion.'];
  if (state.unreadIds.length > 0) {
    out.push(
      'Activate agent-libos-child-processes and read the unread human messages with read_process_messages {message_ids: ' +
        'unread_human_message_ids} (ack defaults to true). The ACK makes this review_token stale: then call process_exit ' +
        'alone without a token for a fresh review.',
    );
  }
  out.push(
    'Read the goal with goal.reference (by namespace and name, never by OID) and the acknowledged messages ' +
      'with acknowledged_human_message_reference (copy its arguments; it changes nothing).',
    'Give every explicit deliverable its own acceptance check citing its expected_source_refs; together the ' +
      'checks cover every expected_source_ref. A completed check cites observed_successful_tool_calls by exact ' +
      'name; a blocked or cancelled check states the exact reason.',
    'Then call process_exit alone with this review_token, completion_evidence and your result. Successful ' +
      'tools and human output keep the token; a goal change, a new human message or an ACK makes it stale.',
  );
  return out;
}

/**
 * The review payload of a state plus the errors of the call that produced it (`[]` for a bare probe).
 *
 * @example
 * import { loadReviewState } from './review-state.js';
 * const review = buildReview(await loadReviewState(ctx, ctx.pid), []);
 * review.review_token; // 'exitrev_…'
 */
export function buildReview(state: ReviewState, validationErrors: readonly string[]): CompletionReview {
  return {
    schema_version: 2,
    review_token: state.reviewToken,
    goal: {
      oid: state.goal.oid,
      version: state.goal.version,
      payload_sha256: state.goal.payloadSha256,
      source: state.goal.source,
      reference: state.goal.reference,
    },
    expected_source_refs: state.expectedSourceRefs,
    acknowledged_human_message_count: state.ackedIds.length,
    acknowledged_human_message_ids: state.ackedIds,
    acknowledged_human_message_sha256: state.ackedSha256,
    acknowledged_human_message_reference: ACKNOWLEDGED_MESSAGES_REFERENCE,
    unread_human_message_ids: state.unreadIds,
    observed_successful_tool_calls: state.observedTools,
    explicit_unobserved_tool_hints: state.hints,
    required_evidence_shape: {
      goal_oid: state.goal.oid,
      reviewed_message_ids: state.ackedIds,
      acceptance_checks: [
        {
          requirement: 'one explicit deliverable (non-blank)',
          source_refs: ['one or more of expected_source_refs'],
          status: 'completed | blocked | cancelled',
          evidence_tool_calls: ['names from observed_successful_tool_calls (at least one when completed)'],
          evidence_summary: 'the concrete result, or the exact reason it is blocked or cancelled (non-blank)',
        },
      ],
      final_verification: ['names from observed_successful_tool_calls (at least one)'],
    },
    instructions: instructionsFor(state),
    validation_errors: validationErrors,
    task_run: null,
  };
}
