import { LibosError, type Right, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord, DelegationSpec, IssueSpec } from '../capability-record.js';
import { compareCandidates, type AuthorityDecision } from '../decision.js';
import { checkAttenuation, specCovers, type AttenuatedShape } from '../delegation.js';
import { isExpired } from '../expiry.js';
import { covers, overlaps, type ParsedResource } from '../resource.js';
import { authorizeIn, auditDecision, spendDecision } from './authorize.js';
import { audit, type EngineEnv } from './env.js';
import { parseDraft, parseSubject, type GrantDraft } from './grant-draft.js';
import { activeGrantsOf, allGrantsOf, getGrant, insertGrant, validChain } from './grant-store.js';
import { T, changed, dbOf, type Db } from './store.js';

interface Lineage {
  readonly issuer: string;
  readonly issuerCapId: string | null;
  readonly parentCapId: string | null;
}

function makeRecord(env: EngineEnv, draft: GrantDraft, lineage: Lineage, shape: AttenuatedShape | null): CapabilityRecord {
  return Object.freeze({
    id: env.ids.next('cap'),
    subject: draft.subject,
    resource: draft.resource.canonical,
    rights: draft.rights,
    effect: draft.effect,
    issuer: lineage.issuer,
    issuerCapId: lineage.issuerCapId,
    parentCapId: lineage.parentCapId,
    depth: shape ? shape.depth : 0,
    maxDepth: shape ? shape.maxDepth : (draft.maxDepth ?? null),
    issuedAt: env.clock.now().toISOString(),
    expiresAt: shape ? shape.expiresAt : (draft.expiresAt ?? null),
    usesRemaining: draft.usesRemaining,
    status: 'active',
    revokeCause: null,
    delegable: draft.delegable,
    revocable: draft.revocable,
    constraints: shape ? shape.constraints : (draft.constraints ?? Object.freeze({})),
    metadata: draft.metadata,
  });
}

function grantedEvent(r: CapabilityRecord): Record<string, unknown> {
  return { capId: r.id, subject: r.subject, resource: r.resource, rights: r.rights, effect: r.effect, issuer: r.issuer, parentCapId: r.parentCapId };
}

function issueDetails(r: CapabilityRecord): Record<string, unknown> {
  return {
    capId: r.id,
    subject: r.subject,
    effect: r.effect,
    rights: r.rights,
    usesRemaining: r.usesRemaining,
    delegable: r.delegable,
    revocable: r.revocable,
    expiresAt: r.expiresAt,
    issuer: r.issuer,
    issuerCapId: r.issuerCapId,
    parentCapId: r.parentCapId,
    depth: r.depth,
    constraintKeys: Object.keys(r.constraints),
  };
}

async function publish(scope: ServiceScope, db: Db, record: CapabilityRecord, kind: string): Promise<void> {
  await insertGrant(db, record, kind);
  await scope.events.emit('capability.granted', grantedEvent(record));
}

/** Host-only, unchecked issue. */
export async function issueTrustedImpl(env: EngineEnv, scope: ServiceScope, spec: IssueSpec, issuer: string): Promise<CapabilityRecord> {
  const db = dbOf(scope);
  const draft = parseDraft(spec as unknown as Record<string, unknown>, env.registry, env.clock.now());
  const record = makeRecord(env, draft, { issuer: parseSubject(issuer, 'issuer'), issuerCapId: null, parentCapId: null }, null);
  await publish(scope, db, record, draft.resource.kind);
  await audit(scope, 'capability.issue', record.resource, 'issued', { ...issueDetails(record), checked: false });
  return record;
}

function hasRestrictiveRules(constraints: Readonly<Record<string, unknown>>): boolean {
  if (!('authority_rules' in constraints)) return false;
  const rules = constraints.authority_rules;
  if (!Array.isArray(rules)) return true;
  return rules.some((r) => typeof r !== 'object' || r === null || (r as { effect?: unknown }).effect !== 'allow');
}

/**
 * Anti-laundering (spec §3): refuse when `holder` has an active, chain-valid deny/ask (or restrictive-rule)
 * record overlapping `resource` with intersecting rights.
 */
async function assertNoLaundering(env: EngineEnv, db: Db, holder: string, resource: ParsedResource, rights: readonly Right[]): Promise<void> {
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  for (const rec of await activeGrantsOf(db, holder, resource.kind)) {
    if (rec.effect === 'allow' && !hasRestrictiveRules(rec.constraints)) continue;
    if (!overlaps(rec.resource, resource) || !rec.rights.some((r) => rights.includes(r))) continue;
    if (!(await validChain(db, rec, now, cache))) continue;
    throw new LibosError('delegation_denied', `resource: ${holder} holds ${rec.effect} record ${rec.id} on ${rec.resource} overlapping ${resource.canonical}; passing on the wider allow would launder it`, {
      details: { field: 'resource', conflictCapId: rec.id },
    });
  }
}

/** The best allow record of `holder` that covers the draft's resource and rights (longest, newest, smallest id). */
async function chooseParent(env: EngineEnv, db: Db, holder: string, draft: GrantDraft, pred: (r: CapabilityRecord) => boolean = () => true): Promise<CapabilityRecord | null> {
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  const ok: CapabilityRecord[] = [];
  for (const rec of await activeGrantsOf(db, holder, draft.resource.kind)) {
    if (rec.effect !== 'allow' || !pred(rec) || !covers(rec.resource, draft.resource) || !draft.rights.every((r) => rec.rights.includes(r))) continue;
    if (await validChain(db, rec, now, cache)) ok.push(rec);
  }
  return ok.sort(compareCandidates)[0] ?? null;
}

/** Checked issue (spec §3): covering `admin` ⇒ any effect; covering `grant` ⇒ transfer of a held, non-finite allow. */
export async function issueCheckedImpl(env: EngineEnv, scope: ServiceScope, actor: string, spec: IssueSpec): Promise<CapabilityRecord> {
  const db = dbOf(scope);
  const draft = parseDraft(spec as unknown as Record<string, unknown>, env.registry, env.clock.now());
  const ctx = { operation: 'capability.issue' };
  const admin = await authorizeIn(env, db, actor, draft.resource.canonical, 'admin', ctx);
  await auditDecision(scope, admin);
  if (admin.allowed) {
    await spendDecision(env, scope, db, actor, admin);
    const record = makeRecord(env, draft, { issuer: actor, issuerCapId: admin.selectedId ?? null, parentCapId: null }, null);
    await publish(scope, db, record, draft.resource.kind);
    await audit(scope, 'capability.issue', record.resource, 'issued', { ...issueDetails(record), checked: true, via: 'admin' });
    return record;
  }
  const grant = await authorizeIn(env, db, actor, draft.resource.canonical, 'grant', ctx);
  await auditDecision(scope, grant);
  if (!grant.allowed) {
    throw new LibosError('permission_denied', `${actor} may not issue ${draft.resource.canonical}: holds neither a covering admin nor grant right (${grant.reason})`, {
      details: { resource: draft.resource.canonical, actor },
    });
  }
  if (draft.effect !== 'allow') {
    throw new LibosError('permission_denied', `${actor} may not issue a ${draft.effect} record: a grant right only transfers allow authority the actor holds`, { details: { field: 'effect' } });
  }
  const parent = await chooseParent(env, db, actor, draft, (r) => r.usesRemaining === null);
  if (!parent) {
    throw new LibosError('permission_denied', `${actor} may not issue ${draft.rights.join(',')} on ${draft.resource.canonical}: no held, unlimited allow covers it`, {
      details: { resource: draft.resource.canonical, rights: draft.rights },
    });
  }
  const shape = checkAttenuation(parent, draft, env.registry, { requireDelegable: false });
  await assertNoLaundering(env, db, actor, draft.resource, draft.rights);
  await spendDecision(env, scope, db, actor, grant);
  const record = makeRecord(env, draft, { issuer: actor, issuerCapId: grant.selectedId ?? null, parentCapId: parent.id }, shape);
  await publish(scope, db, record, draft.resource.kind);
  await audit(scope, 'capability.issue', record.resource, 'issued', { ...issueDetails(record), checked: true, via: 'grant' });
  return record;
}

/** Delegation of one record (spec §3). */
export async function delegateImpl(env: EngineEnv, scope: ServiceScope, parentCapId: string, childSubject: string, spec: DelegationSpec, actor: string): Promise<CapabilityRecord> {
  const db = dbOf(scope);
  const parent = await getGrant(db, parentCapId);
  if (!parent) throw new LibosError('capability_not_found', `parentCapId: no capability ${parentCapId}`, { details: { field: 'parentCapId', capId: parentCapId } });
  if (actor !== 'host' && actor !== parent.subject) {
    throw new LibosError('delegation_denied', `actor: ${actor} does not hold ${parentCapId} (held by ${parent.subject})`, { details: { field: 'actor', capId: parentCapId } });
  }
  if (!(await validChain(db, parent, env.clock.now(), new Map()))) {
    throw new LibosError('delegation_denied', `parentCapId: ${parentCapId} or one of its ancestors is revoked, disabled or expired`, { details: { field: 'parentCapId', capId: parentCapId } });
  }
  const { subject: _ignored, ...rest } = spec;
  const draft = parseDraft(rest as Record<string, unknown>, env.registry, env.clock.now(), childSubject);
  const shape = checkAttenuation(parent, draft, env.registry);
  await assertNoLaundering(env, db, parent.subject, draft.resource, draft.rights);
  const record = makeRecord(env, draft, { issuer: actor, issuerCapId: parent.id, parentCapId: parent.id }, shape);
  await publish(scope, db, record, draft.resource.kind);
  await audit(scope, 'capability.delegate', record.resource, 'delegated', { ...issueDetails(record), parentCapId: parent.id, childCapId: record.id });
  return record;
}

/** Inputs of `deriveAuthority`. */
export interface DeriveRequest {
  /** The pid whose grants are the parents. */
  readonly source: string;
  /** The pid that receives the derived records. */
  readonly target: string;
  readonly specs: readonly DelegationSpec[];
  /** Optional ceiling: every spec must be `specCovers`-admitted by one of these. */
  readonly ceiling?: readonly DelegationSpec[];
  /** Why (e.g. `spawn`, `task_runner`, `fork`); recorded in the audit. */
  readonly kind: string;
}

/** A validated derivation, ready to write. */
export interface DerivePlan {
  readonly items: readonly { readonly parent: CapabilityRecord; readonly draft: GrantDraft; readonly shape: AttenuatedShape }[];
}

function atIndex(i: number, err: unknown): unknown {
  if (!(err instanceof LibosError)) return err;
  return new LibosError(err.code, `specs[${i}]: ${err.message}`, { details: { ...(err.details ?? {}), index: i }, cause: err });
}

/** Validates every spec of a derivation without writing anything. */
export async function planDerive(env: EngineEnv, db: Db, source: string, target: string, specs: readonly DelegationSpec[], ceiling?: readonly DelegationSpec[]): Promise<DerivePlan> {
  if (!Array.isArray(specs) || specs.length > 256) throw new LibosError('invalid_arguments', 'specs: must be an array of at most 256 grant specs', { details: { field: 'specs' } });
  const now = env.clock.now();
  const items: { parent: CapabilityRecord; draft: GrantDraft; shape: AttenuatedShape }[] = [];
  for (let i = 0; i < specs.length; i++) {
    try {
      const { subject: _s, ...rest } = specs[i]!;
      const draft = parseDraft(rest as Record<string, unknown>, env.registry, now, target);
      if (ceiling && !ceiling.some((c) => specCovers(c, specs[i]!))) {
        throw new LibosError('delegation_denied', `${draft.resource.canonical} ${draft.rights.join(',')} is outside the ceiling`, { details: { field: 'ceiling' } });
      }
      const parent = await chooseParent(env, db, source, draft);
      if (!parent) {
        throw new LibosError('delegation_denied', `${source} holds no allow covering ${draft.rights.join(',')} on ${draft.resource.canonical}`, { details: { field: 'resource' } });
      }
      const shape = checkAttenuation(parent, draft, env.registry);
      await assertNoLaundering(env, db, source, draft.resource, draft.rights);
      items.push({ parent, draft, shape });
    } catch (err) {
      throw atIndex(i, err);
    }
  }
  return { items };
}

/** Validates all specs, then publishes all records and one `capability.derive_authority` audit. */
export async function deriveImpl(env: EngineEnv, scope: ServiceScope, req: DeriveRequest): Promise<CapabilityRecord[]> {
  const db = dbOf(scope);
  const target = parseSubject(req.target, 'target');
  const plan = await planDerive(env, db, req.source, target, req.specs, req.ceiling);
  const out: CapabilityRecord[] = [];
  for (const { parent, draft, shape } of plan.items) {
    const record = makeRecord(env, draft, { issuer: req.source, issuerCapId: parent.id, parentCapId: parent.id }, shape);
    await publish(scope, db, record, draft.resource.kind);
    out.push(record);
  }
  await audit(scope, 'capability.derive_authority', target, 'derived', {
    kind: req.kind,
    source: req.source,
    target,
    count: out.length,
    ceilingApplied: req.ceiling !== undefined,
    capIds: out.map((r) => r.id),
    parentCapIds: out.map((r) => r.parentCapId),
  });
  return out;
}

async function markRevoked(env: EngineEnv, scope: ServiceScope, db: Db, rec: CapabilityRecord, actor: string, reason: string): Promise<void> {
  const res = await db
    .updateTable(T.grants)
    .set({ status: 'revoked', revoke_cause: 'explicit', revoked_at: env.clock.now().toISOString() })
    .where('id', '=', rec.id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  if (changed(res) !== 1) throw new LibosError('capability_invalid', `capId: ${rec.id} is no longer active`, { details: { field: 'capId', capId: rec.id } });
  const inv = await db.updateTable(T.reservations).set({ status: 'invalidated', settled_at: env.clock.now().toISOString() }).where('cap_id', '=', rec.id).where('status', '=', 'reserved').executeTakeFirst();
  await scope.events.emit('capability.revoked', { capId: rec.id, subject: rec.subject, cause: 'explicit', actor });
  await audit(scope, 'capability.revoke', rec.resource, 'revoked', { capId: rec.id, subject: rec.subject, actor, reason, effect: rec.effect, invalidatedReservations: changed(inv) });
}

async function loadActive(db: Db, capId: string): Promise<CapabilityRecord> {
  const rec = await getGrant(db, capId);
  if (!rec) throw new LibosError('capability_not_found', `capId: no capability ${capId}`, { details: { field: 'capId', capId } });
  if (rec.status !== 'active') throw new LibosError('capability_invalid', `capId: ${capId} is already ${rec.status}${rec.revokeCause ? ` (${rec.revokeCause})` : ''}`, { details: { field: 'capId', capId } });
  return rec;
}

/** Checked revoke (spec §3). */
export async function revokeImpl(env: EngineEnv, scope: ServiceScope, actor: string, capId: string): Promise<void> {
  const db = dbOf(scope);
  const rec = await loadActive(db, capId);
  if (!rec.revocable) throw new LibosError('permission_denied', `capId: ${capId} is not revocable`, { details: { field: 'capId', capId } });
  if (actor === 'host') return markRevoked(env, scope, db, rec, actor, 'host');
  if (actor === rec.subject) {
    if (rec.effect !== 'allow') {
      throw new LibosError('permission_denied', `${actor} may not drop its own ${rec.effect} record ${capId}`, { details: { field: 'capId', capId } });
    }
    return markRevoked(env, scope, db, rec, actor, 'relinquished');
  }
  if (actor === rec.issuer) return markRevoked(env, scope, db, rec, actor, 'issuer');
  for (const right of ['revoke', 'admin'] as const) {
    const d = await authorizeIn(env, db, actor, rec.resource, right, { operation: 'capability.revoke' });
    await auditDecision(scope, d);
    if (d.allowed) {
      await spendDecision(env, scope, db, actor, d);
      return markRevoked(env, scope, db, rec, actor, `holder of ${right}`);
    }
  }
  throw new LibosError('permission_denied', `${actor} may not revoke ${capId}: not its issuer, not its allow-holder, and holds no covering revoke or admin`, {
    details: { field: 'capId', capId },
  });
}

/** Host-only revoke that also removes non-revocable records. */
export async function revokeTrustedImpl(env: EngineEnv, scope: ServiceScope, capId: string, reason: string): Promise<void> {
  const db = dbOf(scope);
  const rec = await loadActive(db, capId);
  await markRevoked(env, scope, db, rec, 'host', reason);
}

/** Grants of a subject; by default only active, unexpired, chain-valid ones. */
export async function listImpl(env: EngineEnv, scope: ServiceScope, subject: string, includeInactive: boolean): Promise<CapabilityRecord[]> {
  const db = dbOf(scope);
  const all = await allGrantsOf(db, subject);
  if (includeInactive) return all;
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  const out: CapabilityRecord[] = [];
  for (const r of all) if (r.status === 'active' && !isExpired(r.expiresAt, now) && (await validChain(db, r, now, cache))) out.push(r);
  return out;
}

export type { AuthorityDecision };
