import { LibosError, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord, IssueSpec } from '../capability-record.js';
import { checkAttenuation } from '../delegation.js';
import { authorizeIn, auditDecision, spendDecision } from './authorize.js';
import { audit, type EngineEnv } from './env.js';
import { parseDraft, parseSubject } from './grant-draft.js';
import { assertNoLaundering, chooseParent, issueDetails, makeRecord, publish } from './grant-publish.js';
import { dbOf } from './store.js';

/** Host-only, unchecked issue. */
export async function issueTrustedImpl(env: EngineEnv, scope: ServiceScope, spec: IssueSpec, issuer: string): Promise<CapabilityRecord> {
  const db = dbOf(scope);
  const draft = parseDraft(spec as unknown as Record<string, unknown>, env.registry, env.clock.now());
  const record = makeRecord(env, draft, { issuer: parseSubject(issuer, 'issuer'), issuerCapId: null, parentCapId: null }, null);
  await publish(scope, db, record, draft.resource.kind);
  await audit(scope, 'capability.issue', record.resource, 'issued', { ...issueDetails(record), checked: false });
  return record;
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
