import { LibosError, type Right, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import type { ConstraintContext, ConstraintResult } from '../constraints.js';
import { combineVerdicts, compareCandidates, policyOf, verdictOf, type AuthorityDecision, type CandidateVerdict } from '../decision.js';
import { covers, parseResource, type ParsedResource } from '../resource.js';
import { parseRight } from '../rights.js';
import { audit, type EngineEnv } from './env.js';
import { casSpend } from './grant-store.js';
import { coveringRecords, validChain } from './record-lookup.js';
import type { Db } from './store.js';

/** Request facts for one decision (the sdk `CheckOptions` plus rule/approval inputs). */
export type AuthorizeContext = Omit<ConstraintContext, 'subject'>;

function contextPreview(ctx: AuthorizeContext): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  if (ctx.operation !== undefined) out.operation = ctx.operation.slice(0, 200);
  if (ctx.argsHash !== undefined) out.argsHash = ctx.argsHash.slice(0, 128);
  if (ctx.effectId !== undefined) out.effectId = ctx.effectId.slice(0, 128);
  if (ctx.targetStateVersion !== undefined) out.targetStateVersion = ctx.targetStateVersion;
  if (ctx.argv !== undefined) out.argvCount = ctx.argv.length;
  return out;
}

/**
 * Decides among `records` for `subject` (docs/behaviour/capabilities.md). Records of any other subject are ignored even when
 * passed in; candidates must be active, unexpired, chain-valid, hold `right` and cover the resource.
 */
export async function decideAmong(
  env: EngineEnv,
  db: Db,
  subject: string,
  resource: ParsedResource,
  right: Right,
  records: readonly CapabilityRecord[],
  ctx: AuthorizeContext,
): Promise<AuthorityDecision> {
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  const verdicts: CandidateVerdict[] = [];
  const results: ConstraintResult[] = [];
  const chains = new Map<string, CapabilityRecord[]>();
  for (const rec of records) {
    if (rec.subject !== subject || rec.status !== 'active' || !rec.rights.includes(right) || !covers(rec.resource, resource)) continue;
    const chain = await validChain(env.owners, db, rec, now, cache);
    if (!chain) continue;
    chains.set(rec.id, chain);
    const res = env.registry.evaluate(rec.id, rec.constraints, { ...ctx, subject });
    results.push(...res);
    verdicts.push(verdictOf(rec, res));
  }
  const combined = combineVerdicts(verdicts);
  const sel = combined.selected?.record;
  const consumeId = combined.effect === 'allow' && sel && sel.usesRemaining !== null ? sel.id : undefined;
  const decision: AuthorityDecision = {
    subject,
    resource: resource.canonical,
    right,
    allowed: combined.effect === 'allow',
    effect: combined.effect,
    policy: policyOf(combined.effect, consumeId),
    reason: combined.reason,
    matchedIds: verdicts
      .map((v) => v.record)
      .sort(compareCandidates)
      .map((r) => r.id),
    ...(sel ? { selectedId: sel.id } : {}),
    ...(consumeId ? { consumeId } : {}),
    issuerChain: sel ? (chains.get(sel.id) ?? []).map((c) => ({ capId: c.id, issuer: c.issuer })) : [],
    constraintResults: results,
    context: contextPreview(ctx),
  };
  return Object.freeze(decision);
}

/**
 * Loads the subject's candidates (stored and implicit owner records that can cover the resource) and decides.
 * Throws `resource_invalid` / `rights_invalid` on bad input.
 */
export async function authorizeIn(
  env: EngineEnv,
  db: Db,
  subject: string,
  resource: string,
  right: Right,
  ctx: AuthorizeContext,
): Promise<AuthorityDecision> {
  const parsed = parseResource(resource);
  const r = parseRight(right);
  const records = await coveringRecords(env.owners, db, subject, parsed);
  return decideAmong(env, db, subject, parsed, r, records, ctx);
}

/** Audits a decision as `capability.authorize` (no payloads). */
export async function auditDecision(scope: ServiceScope, d: AuthorityDecision): Promise<void> {
  await audit(scope, 'capability.authorize', d.resource, d.effect, {
    subject: d.subject,
    right: d.right,
    allowed: d.allowed,
    policy: d.policy,
    reason: d.reason.slice(0, 500),
    matchedIds: d.matchedIds,
    selectedId: d.selectedId ?? null,
    consumeId: d.consumeId ?? null,
    issuerChain: d.issuerChain,
    constraintResults: d.constraintResults,
    context: d.context,
  });
}

/**
 * Spends one use of the record a decision selected (CAS in the transaction). No-op without `consumeId`.
 * Throws `permission_denied` when the use is already gone or the decision is not the pid's allow.
 */
export async function spendDecision(
  env: EngineEnv,
  scope: ServiceScope,
  db: Db,
  pid: string,
  d:
    | AuthorityDecision
    | {
        readonly subject: string;
        readonly allowed: boolean;
        readonly consumeId?: string;
        readonly resource: string;
        readonly right: string;
      },
): Promise<void> {
  if (!d.consumeId) return;
  if (d.subject !== pid || !d.allowed) {
    throw new LibosError(
      'permission_denied',
      `consume: decision for ${d.subject} (${d.allowed ? 'allowed' : 'not allowed'}) cannot be spent by ${pid}`,
      { details: { capId: d.consumeId } },
    );
  }
  const left = await casSpend(db, d.consumeId, 1, env.clock.now().toISOString());
  if (left === null) {
    throw new LibosError(
      'permission_denied',
      `${pid} may not ${d.right} ${d.resource}: the one-use grant ${d.consumeId} is already spent or revoked`,
      {
        details: { resource: d.resource, right: d.right, capId: d.consumeId },
      },
    );
  }
  await audit(scope, 'capability.consume', d.consumeId, 'consumed', { subject: pid, capId: d.consumeId, count: 1, usesRemaining: left });
  if (left === 0) await scope.events.emit('capability.revoked', { capId: d.consumeId, subject: pid, cause: 'exhausted' });
}
