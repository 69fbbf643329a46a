import { canonicalSha256, SERVICE_NAMES, type ProcessService, type ToolContext } from '@libos/sdk';
import { resolveExitResult, type ExitResultInput } from '../tools/exit-result.js';
import { buildReview, type CompletionReview } from './build-review.js';
import type { CompletionEvidence } from './completion-evidence.js';
import { loadReviewState } from './review-state.js';
import { validateCompletion } from './validate-evidence.js';
import { resources } from '@libos/sdk';

/** What a review-gated `process_exit` call carries. */
export interface GatedExitArgs extends ExitResultInput {
  readonly review_token?: string | undefined;
  readonly completion_evidence?: CompletionEvidence | undefined;
}

export type GatedExitOutcome =
  | { readonly status: 'completion_review_required'; readonly result_oid: null; readonly completion_review: CompletionReview }
  | { readonly status: 'exited'; readonly pid: string; readonly result_oid: string | null; readonly state_generation: number };

/** `"none"` and `"null"` (any case) in a token mean no token. */
const tokenOf = (t: string | undefined) => (t === undefined || /^(none|null)$/i.test(t.trim()) ? undefined : t);

/**
 * The result a passing review commits: `result_oid` as is; otherwise a generated payload that also carries the
 * evidence (`payload` merged when it is an object, else kept under `value`; `message` kept beside it).
 */
function resultWithEvidence(args: GatedExitArgs, evidence: CompletionEvidence): ExitResultInput {
  if (args.result_oid !== undefined) return { result_oid: args.result_oid };
  const p = args.payload;
  if (p !== undefined) {
    const base = p !== null && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : { value: p };
    return { payload: { ...base, completion_evidence: evidence } };
  }
  return {
    payload: args.message !== undefined ? { message: args.message, completion_evidence: evidence } : { completion_evidence: evidence },
  };
}

/**
 * A review-gated exit, in the call's transaction (which the store serializes with every human message post). A bare
 * call (no token, no evidence) is a probe: it returns a review and the process stays live. Otherwise the evidence is
 * validated against a freshly built review: any error returns that review with `validation_errors` (audit
 * `process.exit_review_required`); a pass audits `process.exit_review_passed` and commits the exit exactly as a
 * one-phase exit does.
 *
 * @example
 * const probe = await gatedExit(ctx, {}); // { status: 'completion_review_required', completion_review: { review_token: 'exitrev_…', … } }
 */
export async function gatedExit(ctx: ToolContext, args: GatedExitArgs): Promise<GatedExitOutcome> {
  const state = await loadReviewState(ctx, ctx.pid);
  const token = tokenOf(args.review_token);
  const evidence = args.completion_evidence;
  const probe = token === undefined && evidence === undefined;
  const errors = probe ? [] : validateCompletion(state, token, evidence);
  if (probe || errors.length > 0 || evidence === undefined) {
    await ctx.audit.record({
      action: 'process.exit_review_required',
      target: resources.process(ctx.pid),
      decision: probe ? 'probe' : 'rejected',
      details: {
        review_token: state.reviewToken,
        acknowledged_human_message_ids: state.ackedIds,
        unread_human_message_ids: state.unreadIds,
        goal_source: state.goal.source,
        validation_errors: errors,
        authority_changed: false,
      },
    });
    return { status: 'completion_review_required', result_oid: null, completion_review: buildReview(state, errors) };
  }
  await ctx.audit.record({
    action: 'process.exit_review_passed',
    target: resources.process(ctx.pid),
    decision: 'passed',
    details: {
      review_token: state.reviewToken,
      goal_source: state.goal.source,
      evidence_sha256: canonicalSha256(evidence),
      acceptance_check_count: evidence.acceptance_checks.length,
      authority_changed: false,
    },
  });
  const resultOid = await resolveExitResult(ctx, resultWithEvidence(args, evidence));
  const receipt = await ctx.service<ProcessService>(SERVICE_NAMES.processes).exit(ctx.pid, { resultOid });
  return { status: receipt.status, pid: ctx.pid, result_oid: receipt.result_oid, state_generation: receipt.state_generation };
}
