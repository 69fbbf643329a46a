/**
 * The closed set of rights. No right implies another: `write` does not include `read`,
 * and `admin` only powers meta-operations (issue, revoke, declassify).
 */
export const RIGHTS = ['read', 'write', 'delete', 'execute', 'materialize', 'link', 'diff', 'grant', 'revoke', 'approve', 'admin'] as const;
export type Right = (typeof RIGHTS)[number];

export function isRight(value: unknown): value is Right {
  return typeof value === 'string' && (RIGHTS as readonly string[]).includes(value);
}

/** Effects a grant can carry. */
export type Effect = 'allow' | 'deny' | 'ask';

/** Budget fields, charged to a pid and every ancestor. */
export const BUDGET_FIELDS = [
  'tool_calls',
  'child_processes',
  'llm_calls',
  'llm_total_tokens',
  'context_total_tokens',
  'runtime_seconds',
] as const;
export type BudgetField = (typeof BUDGET_FIELDS)[number];
export type Usage = Partial<Record<BudgetField, number>>;
