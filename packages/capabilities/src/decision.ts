import type { Decision, Effect } from '@libos/sdk';
import type { CapabilityRecord, DecisionPolicy } from './capability-record.js';
import type { ConstraintResult } from './constraints.js';
import { resourceSpecificity } from './resource.js';

/** A full decision: the sdk `Decision` plus policy, issuer chain and constraint results. */
export interface AuthorityDecision extends Decision {
  readonly policy: DecisionPolicy;
  /** Issuers from the selected record up its parent links (attribution only). */
  readonly issuerChain: readonly { readonly capId: string; readonly issuer: string }[];
  readonly constraintResults: readonly ConstraintResult[];
  /** Request facts (operation, hashes), never payloads. */
  readonly context: Readonly<Record<string, string | number>>;
}

/** The verdict one candidate record gives for one request. */
export type Verdict = 'DENY' | 'ASK' | 'ALLOW' | 'SKIP';

export interface CandidateVerdict {
  readonly record: CapabilityRecord;
  readonly verdict: Verdict;
  /** A one-use allow whose `approval_binding` matched this request. */
  readonly approvalBound: boolean;
  readonly reason: string;
}

const STRICTNESS: Record<Effect, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The verdict of one candidate: a rule-selected deny or a malformed rule denies;
 * a deny/ask whose constraints fail (other than a scoped miss) denies; a scoped miss skips;
 * an allow whose constraints fail is skipped; else the (stricter of record and rule) effect.
 */
export function verdictOf(record: CapabilityRecord, results: readonly ConstraintResult[]): CandidateVerdict {
  const mine = results.filter((r) => r.capId === record.id);
  const malformed = mine.find((r) => r.status === 'malformed');
  if (malformed) return { record, verdict: 'DENY', approvalBound: false, reason: `malformed rule: ${malformed.reason ?? ''}` };
  const ruleEffects = mine.filter((r) => r.status === 'rule').map((r) => r.ruleEffect!);
  if (ruleEffects.includes('deny')) return { record, verdict: 'DENY', approvalBound: false, reason: 'rule-selected deny' };
  const failed = mine.find((r) => r.status === 'fail' || r.status === 'unknown_key');
  if (failed) {
    return record.effect === 'allow'
      ? { record, verdict: 'SKIP', approvalBound: false, reason: `constraint ${failed.key} rejected: ${failed.reason ?? ''}` }
      : {
          record,
          verdict: 'DENY',
          approvalBound: false,
          reason: `${record.effect} record with failing constraint ${failed.key}: fail closed`,
        };
  }
  if (mine.some((r) => r.status === 'scoped_miss'))
    return { record, verdict: 'SKIP', approvalBound: false, reason: 'no rule scoped to this operation' };
  const effect = [record.effect, ...ruleEffects].reduce((a, e) => (STRICTNESS[e] > STRICTNESS[a] ? e : a));
  const approvalBound =
    effect === 'allow' && record.usesRemaining === 1 && mine.some((r) => r.key === 'approval_binding' && r.status === 'pass');
  return {
    record,
    verdict: effect === 'deny' ? 'DENY' : effect === 'ask' ? 'ASK' : 'ALLOW',
    approvalBound,
    reason: `${effect} by ${record.id}`,
  };
}

/** Tie order: longest resource, newest issuedAt, smallest id. */
export function compareCandidates(a: CapabilityRecord, b: CapabilityRecord): number {
  const s = resourceSpecificity(b.resource) - resourceSpecificity(a.resource);
  if (s !== 0) return s;
  if (a.issuedAt !== b.issuedAt) return a.issuedAt < b.issuedAt ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export interface Combined {
  readonly effect: Effect | 'missing';
  readonly selected: CandidateVerdict | null;
  readonly reason: string;
}

/**
 * Precedence (docs/behaviour/capabilities.md): any DENY ⇒ deny; else a one-use ALLOW with a matching `approval_binding`
 * ⇒ allow; else ASK ⇒ ask; else ALLOW ⇒ allow; else missing.
 */
export function combineVerdicts(verdicts: readonly CandidateVerdict[]): Combined {
  const best = (v: Verdict, pred: (c: CandidateVerdict) => boolean = () => true): CandidateVerdict | null =>
    verdicts.filter((c) => c.verdict === v && pred(c)).sort((a, b) => compareCandidates(a.record, b.record))[0] ?? null;
  const deny = best('DENY');
  if (deny) return { effect: 'deny', selected: deny, reason: deny.reason };
  const bound = best('ALLOW', (c) => c.approvalBound);
  if (bound) return { effect: 'allow', selected: bound, reason: 'one-shot approval bound to these arguments' };
  const ask = best('ASK');
  if (ask) return { effect: 'ask', selected: ask, reason: ask.reason };
  const allow = best('ALLOW');
  if (allow) return { effect: 'allow', selected: allow, reason: allow.reason };
  if (verdicts.length > 0)
    return { effect: 'missing', selected: null, reason: `constraints rejected: ${verdicts.map((v) => v.reason).join('; ')}` };
  return { effect: 'missing', selected: null, reason: 'no grant holds this right on this resource' };
}

/** Policy name of a decision. */
export function policyOf(effect: Effect | 'missing', consumeId: string | undefined): DecisionPolicy {
  if (effect === 'deny') return 'always_deny';
  if (effect === 'ask') return 'ask_each_time';
  if (effect === 'allow') return consumeId ? 'allow_once' : 'always_allow';
  return 'none';
}
