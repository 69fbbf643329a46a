import { LibosError, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord, DelegationSpec } from '../capability-record.js';
import { checkAttenuation, specCovers, type AttenuatedShape } from '../delegation.js';
import { audit, type EngineEnv } from './env.js';
import { parseDraft, parseSubject, type GrantDraft } from './grant-draft.js';
import { assertNoLaundering, chooseParent, issueDetails, makeRecord, publish } from './grant-publish.js';
import { getRecord, validChain } from './record-lookup.js';
import { dbOf, type Db } from './store.js';
import type { DeriveRequest } from '../engine-requests.js';

export type { DeriveRequest } from '../engine-requests.js';

/** Delegation of one record (docs/behaviour/capabilities.md). */
export async function delegateImpl(
  env: EngineEnv,
  scope: ServiceScope,
  parentCapId: string,
  childSubject: string,
  spec: DelegationSpec,
  actor: string,
): Promise<CapabilityRecord> {
  const db = dbOf(scope);
  const parent = await getRecord(env.owners, db, parentCapId);
  if (!parent)
    throw new LibosError('capability_not_found', `parentCapId: no capability ${parentCapId}`, {
      details: { field: 'parentCapId', capId: parentCapId },
    });
  if (actor !== 'host' && actor !== parent.subject) {
    throw new LibosError('delegation_denied', `actor: ${actor} does not hold ${parentCapId} (held by ${parent.subject})`, {
      details: { field: 'actor', capId: parentCapId },
    });
  }
  if (!(await validChain(env.owners, db, parent, env.clock.now(), new Map()))) {
    throw new LibosError('delegation_denied', `parentCapId: ${parentCapId} or one of its ancestors is revoked, disabled or expired`, {
      details: { field: 'parentCapId', capId: parentCapId },
    });
  }
  const { subject: _ignored, ...rest } = spec;
  const draft = parseDraft(rest as Record<string, unknown>, env.registry, env.clock.now(), childSubject);
  const shape = checkAttenuation(parent, draft, env.registry);
  await assertNoLaundering(env, db, parent.subject, draft.resource, draft.rights);
  const record = makeRecord(env, draft, { issuer: actor, issuerCapId: parent.id, parentCapId: parent.id }, shape);
  await publish(scope, db, record, draft.resource.kind);
  await audit(scope, 'capability.delegate', record.resource, 'delegated', {
    ...issueDetails(record),
    parentCapId: parent.id,
    childCapId: record.id,
  });
  return record;
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
export async function planDerive(
  env: EngineEnv,
  db: Db,
  source: string,
  target: string,
  specs: readonly DelegationSpec[],
  ceiling?: readonly DelegationSpec[],
): Promise<DerivePlan> {
  if (!Array.isArray(specs) || specs.length > 256)
    throw new LibosError('invalid_arguments', 'specs: must be an array of at most 256 grant specs', { details: { field: 'specs' } });
  const now = env.clock.now();
  const items: { parent: CapabilityRecord; draft: GrantDraft; shape: AttenuatedShape }[] = [];
  for (let i = 0; i < specs.length; i++) {
    try {
      const { subject: _s, ...rest } = specs[i]!;
      const draft = parseDraft(rest as Record<string, unknown>, env.registry, now, target);
      if (ceiling && !ceiling.some((c) => specCovers(c, specs[i]!))) {
        throw new LibosError('delegation_denied', `${draft.resource.canonical} ${draft.rights.join(',')} is outside the ceiling`, {
          details: { field: 'ceiling' },
        });
      }
      const parent = await chooseParent(env, db, source, draft);
      if (!parent) {
        throw new LibosError(
          'delegation_denied',
          `${source} holds no allow covering ${draft.rights.join(',')} on ${draft.resource.canonical}`,
          { details: { field: 'resource' } },
        );
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
