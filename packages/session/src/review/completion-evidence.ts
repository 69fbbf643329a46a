import { z } from '@libos/sdk';

const nonBlank = (field: string, max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim() !== '', `${field} must not be blank`);

/** Bounds of completion evidence (the call's arguments are capped at 1 MiB as a whole as well). */
export const EVIDENCE_LIMITS = {
  checks: 256,
  refs: 1_001,
  tools: 256,
  ids: 1_000,
  requirementChars: 4_000,
  summaryChars: 16_000,
  nameChars: 128,
} as const;

/** One acceptance check: one explicit deliverable, where it comes from, what became of it, and the proof. */
export const acceptanceCheckSchema = z.strictObject({
  requirement: nonBlank('requirement', EVIDENCE_LIMITS.requirementChars).describe('one explicit deliverable, in your words'),
  source_refs: z
    .array(z.string().min(1).max(EVIDENCE_LIMITS.nameChars))
    .min(1)
    .max(EVIDENCE_LIMITS.refs)
    .describe('expected_source_refs this check answers (the goal OID, acked message ids)'),
  status: z.enum(['completed', 'blocked', 'cancelled']),
  evidence_tool_calls: z
    .array(z.string().max(EVIDENCE_LIMITS.nameChars))
    .max(EVIDENCE_LIMITS.tools)
    .describe('observed successful tool names (not call ids); completed checks need at least one'),
  evidence_summary: nonBlank('evidence_summary', EVIDENCE_LIMITS.summaryChars).describe(
    'the concrete result, or the exact reason it is blocked/cancelled',
  ),
});

/**
 * `completion_evidence` of a review-gated `process_exit`. Extra keys are refused, at every level.
 *
 * @example
 * completionEvidenceSchema.parse({
 *   goal_oid: 'obj_0000000000000001',
 *   reviewed_message_ids: [],
 *   acceptance_checks: [
 *     {
 *       requirement: 'write the ledger',
 *       source_refs: ['obj_0000000000000001'],
 *       status: 'completed',
 *       evidence_tool_calls: ['create_memory_object'],
 *       evidence_summary: 'ledger created with 3 entries',
 *     },
 *   ],
 *   final_verification: ['read_memory_object'],
 * });
 */
export const completionEvidenceSchema = z.strictObject({
  goal_oid: z.string().max(EVIDENCE_LIMITS.nameChars).describe('the reviewed goal.oid, exactly'),
  reviewed_message_ids: z
    .array(z.string().max(EVIDENCE_LIMITS.nameChars))
    .max(EVIDENCE_LIMITS.ids)
    .describe("the review's acknowledged_human_message_ids, exactly ([] when none)"),
  acceptance_checks: z.array(acceptanceCheckSchema).min(1).max(EVIDENCE_LIMITS.checks),
  final_verification: z
    .array(z.string().max(EVIDENCE_LIMITS.nameChars))
    .min(1)
    .max(EVIDENCE_LIMITS.tools)
    .describe('observed successful tool names that verified the final state'),
});

export type CompletionEvidence = z.output<typeof completionEvidenceSchema>;
export type AcceptanceCheck = z.output<typeof acceptanceCheckSchema>;
