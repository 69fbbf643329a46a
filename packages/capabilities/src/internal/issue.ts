import { LibosError, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord, IssueSpec } from '../capability-record.js';
import { checkAttenuation } from '../delegation.js';
import { parseResource } from '../resource.js';
import { parseRights } from '../rights.js';
import { authorizeIn, auditDecision, spendDecision } from './authorize.js';
import { audit, type EngineEnv } from './env.js';
import { parseDraft, parseSubject } from './grant-draft.js';
import { assertNoLaundering, chooseParent, grantedEvent, issueDetails, makeRecord, publish } from './grant-publish.js';
import { getGrant } from './grant-store.js';
import { ownedTarget, resolveOwner } from './owner-grants.js';
import { dbOf } from './store.js';

/**
 * Records an owner's rights on its own resource (`spec.ownership`): nothing is stored, the record is derived from
 * ownership at every check. The resolver must agree on owner and rights, and only subject, resource and rights may
 * be given; audited and announced like any trusted issue. Throws `capability_invalid` naming the field.
 */
async function recordOwnership(env: EngineEnv, scope: ServiceScope, spec: IssueSpec, issuer: string): Promise<CapabilityRecord> {
  const bad = (field: string, msg: string) => new LibosError('capability_invalid', `${field}: ${msg}`, { details: { field } });
  const given = spec as unknown as Record<string, unknown>;
  const extra = Object.keys(given).filter((k) => !['subject', 'resource', 'rights', 'ownership'].includes(k) && given[k] !== undefined);
  if (extra.length > 0) throw bad(extra[0]!, "an owner's rights are a plain allow of subject, resource and rights; nothing else is set");
  const subject = parseSubject(spec.subject);
  if (parseSubject(issuer, 'issuer') !== subject) {
    throw bad('issuer', `${issuer} cannot record rights that ${subject} holds by ownership; only the owner does`);
  }
  const resource = parseResource(spec.resource);
  const target = ownedTarget(env.owners, resource);
  if (!target) throw bad('resource', `${resource.canonical} is not an exact resource of a kind with an ownership resolver`);
  const db = dbOf(scope);
  const record = await resolveOwner(env.owners, db, resource);
  if (!record || record.subject !== subject) {
    throw bad('subject', `${subject} does not own ${resource.canonical} (owner: ${record?.subject ?? 'none'})`);
  }
  const rights = parseRights(spec.rights);
  if (rights.join(',') !== record.rights.join(',')) {
    throw bad('rights', `${rights.join(',')} differ from the owner's rights ${record.rights.join(',')} on ${resource.canonical}`);
  }
  if ((await getGrant(db, record.id)) !== null) {
    throw bad('resource', `the owner record ${record.id} is already stored (revoked); ownership does not restore it`);
  }
  await scope.events.emit('capability.granted', grantedEvent(record));
  await audit(scope, 'capability.issue', record.resource, 'issued', { ...issueDetails(record), checked: false, ownership: true });
  return record;
}

/** Host-only, unchecked issue (`spec.ownership`: an owner's rights, recorded but derived, never stored). */
export async function issueTrustedImpl(env: EngineEnv, scope: ServiceScope, spec: IssueSpec, issuer: string): Promise<CapabilityRecord> {
  if (spec.ownership === true) return recordOwnership(env, scope, spec, issuer);
  const { ownership: _plain, ...plain } = spec;
  const db = dbOf(scope);
  const draft = parseDraft(plain as unknown as Record<string, unknown>, env.registry, env.clock.now());
  const record = makeRecord(env, draft, { issuer: parseSubject(issuer, 'issuer'), issuerCapId: null, parentCapId: null }, null);
  await publish(scope, db, record, draft.resource.kind);
  await audit(scope, 'capability.issue', record.resource, 'issued', { ...issueDetails(record), checked: false });
  return record;
}

/** Checked issue: covering `admin` ⇒ any effect; covering `grant` ⇒ transfer of a held, non-finite allow. */
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
    throw new LibosError(
      'permission_denied',
      `${actor} may not issue ${draft.resource.canonical}: holds neither a covering admin nor grant right (${grant.reason})`,
      {
        details: { resource: draft.resource.canonical, actor },
      },
    );
  }
  if (draft.effect !== 'allow') {
    throw new LibosError(
      'permission_denied',
      `${actor} may not issue a ${draft.effect} record: a grant right only transfers allow authority the actor holds`,
      { details: { field: 'effect' } },
    );
  }
  const parent = await chooseParent(env, db, actor, draft, (r) => r.usesRemaining === null);
  if (!parent) {
    throw new LibosError(
      'permission_denied',
      `${actor} may not issue ${draft.rights.join(',')} on ${draft.resource.canonical}: no held, unlimited allow covers it`,
      {
        details: { resource: draft.resource.canonical, rights: draft.rights },
      },
    );
  }
  const shape = checkAttenuation(parent, draft, env.registry, { requireDelegable: false });
  await assertNoLaundering(env, db, actor, draft.resource, draft.rights);
  await spendDecision(env, scope, db, actor, grant);
  const record = makeRecord(env, draft, { issuer: actor, issuerCapId: grant.selectedId ?? null, parentCapId: parent.id }, shape);
  await publish(scope, db, record, draft.resource.kind);
  await audit(scope, 'capability.issue', record.resource, 'issued', { ...issueDetails(record), checked: true, via: 'grant' });
  return record;
}
