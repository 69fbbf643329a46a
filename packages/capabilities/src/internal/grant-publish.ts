import { LibosError, type Right, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import { compareCandidates } from '../decision.js';
import type { AttenuatedShape } from '../delegation.js';
import { covers, overlaps, type ParsedResource } from '../resource.js';
import type { EngineEnv } from './env.js';
import type { GrantDraft } from './grant-draft.js';
import { activeGrantsOf, insertGrant } from './grant-store.js';
import { coveringRecords, validChain } from './record-lookup.js';
import type { Db } from './store.js';

export interface Lineage {
  readonly issuer: string;
  readonly issuerCapId: string | null;
  readonly parentCapId: string | null;
}

export function makeRecord(env: EngineEnv, draft: GrantDraft, lineage: Lineage, shape: AttenuatedShape | null): CapabilityRecord {
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

export function grantedEvent(r: CapabilityRecord): Record<string, unknown> {
  return {
    capId: r.id,
    subject: r.subject,
    resource: r.resource,
    rights: r.rights,
    effect: r.effect,
    issuer: r.issuer,
    parentCapId: r.parentCapId,
  };
}

export function issueDetails(r: CapabilityRecord): Record<string, unknown> {
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

export async function publish(scope: ServiceScope, db: Db, record: CapabilityRecord, kind: string): Promise<void> {
  await insertGrant(db, record, kind);
  await scope.events.emit('capability.granted', grantedEvent(record));
}

export function hasRestrictiveRules(constraints: Readonly<Record<string, unknown>>): boolean {
  if (!('authority_rules' in constraints)) return false;
  const rules = constraints.authority_rules;
  if (!Array.isArray(rules)) return true;
  return rules.some((r) => typeof r !== 'object' || r === null || (r as { effect?: unknown }).effect !== 'allow');
}

/**
 * Anti-laundering (CAP-30): refuse when `holder` has an active, chain-valid deny/ask (or restrictive-rule)
 * record overlapping `resource` with intersecting rights.
 */
export async function assertNoLaundering(
  env: EngineEnv,
  db: Db,
  holder: string,
  resource: ParsedResource,
  rights: readonly Right[],
): Promise<void> {
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  for (const rec of await activeGrantsOf(db, holder, resource.kind)) {
    if (rec.effect === 'allow' && !hasRestrictiveRules(rec.constraints)) continue;
    if (!overlaps(rec.resource, resource) || !rec.rights.some((r) => rights.includes(r))) continue;
    if (!(await validChain(env.owners, db, rec, now, cache))) continue;
    throw new LibosError(
      'delegation_denied',
      `resource: ${holder} holds ${rec.effect} record ${rec.id} on ${rec.resource} overlapping ${resource.canonical}; ` +
        `passing on the wider allow would launder it`,
      {
        details: { field: 'resource', conflictCapId: rec.id },
      },
    );
  }
}

/** The best allow record of `holder` that covers the draft's resource and rights (longest, newest, smallest id). */
export async function chooseParent(
  env: EngineEnv,
  db: Db,
  holder: string,
  draft: GrantDraft,
  pred: (r: CapabilityRecord) => boolean = () => true,
): Promise<CapabilityRecord | null> {
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  const ok: CapabilityRecord[] = [];
  for (const rec of await coveringRecords(env.owners, db, holder, draft.resource)) {
    if (rec.effect !== 'allow' || !pred(rec) || !covers(rec.resource, draft.resource) || !draft.rights.every((r) => rec.rights.includes(r)))
      continue;
    if (await validChain(env.owners, db, rec, now, cache)) ok.push(rec);
  }
  return ok.sort(compareCandidates)[0] ?? null;
}
