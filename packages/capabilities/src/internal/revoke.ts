import { LibosError, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import { parseResource } from '../resource.js';
import { authorizeIn, auditDecision, spendDecision } from './authorize.js';
import { audit, type EngineEnv } from './env.js';
import { getGrant, rowFromRecord } from './grant-store.js';
import { OWNER_CAP_PREFIX } from './owner-grants.js';
import { getRecord } from './record-lookup.js';
import { T, changed, dbOf, type Db } from './store.js';

/** Marks a stored record revoked; an implicit owner record is stored for the first time, already revoked. */
async function storeRevoked(env: EngineEnv, db: Db, rec: CapabilityRecord): Promise<number> {
  const at = env.clock.now().toISOString();
  if (rec.id.startsWith(OWNER_CAP_PREFIX) && (await getGrant(db, rec.id)) === null) {
    const row = { ...rowFromRecord(rec, parseResource(rec.resource).kind), status: 'revoked', revoke_cause: 'explicit', revoked_at: at };
    await db.insertInto(T.grants).values(row).execute();
    return 1;
  }
  const res = await db
    .updateTable(T.grants)
    .set({ status: 'revoked', revoke_cause: 'explicit', revoked_at: at })
    .where('id', '=', rec.id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return changed(res);
}

async function markRevoked(
  env: EngineEnv,
  scope: ServiceScope,
  db: Db,
  rec: CapabilityRecord,
  actor: string,
  reason: string,
): Promise<void> {
  if ((await storeRevoked(env, db, rec)) !== 1) {
    throw new LibosError('capability_invalid', `capId: ${rec.id} is no longer active`, { details: { field: 'capId', capId: rec.id } });
  }
  const inv = await db
    .updateTable(T.reservations)
    .set({ status: 'invalidated', settled_at: env.clock.now().toISOString() })
    .where('cap_id', '=', rec.id)
    .where('status', '=', 'reserved')
    .executeTakeFirst();
  await scope.events.emit('capability.revoked', { capId: rec.id, subject: rec.subject, cause: 'explicit', actor });
  await audit(scope, 'capability.revoke', rec.resource, 'revoked', {
    capId: rec.id,
    subject: rec.subject,
    actor,
    reason,
    effect: rec.effect,
    invalidatedReservations: changed(inv),
  });
}

async function loadActive(env: EngineEnv, db: Db, capId: string): Promise<CapabilityRecord> {
  const rec = await getRecord(env.owners, db, capId);
  if (!rec) throw new LibosError('capability_not_found', `capId: no capability ${capId}`, { details: { field: 'capId', capId } });
  if (rec.status !== 'active')
    throw new LibosError(
      'capability_invalid',
      `capId: ${capId} is already ${rec.status}${rec.revokeCause ? ` (${rec.revokeCause})` : ''}`,
      { details: { field: 'capId', capId } },
    );
  return rec;
}

/** Checked revoke (docs/behaviour/capabilities.md). */
export async function revokeImpl(env: EngineEnv, scope: ServiceScope, actor: string, capId: string): Promise<void> {
  const db = dbOf(scope);
  const rec = await loadActive(env, db, capId);
  if (!rec.revocable) throw new LibosError('permission_denied', `capId: ${capId} is not revocable`, { details: { field: 'capId', capId } });
  if (actor === 'host') return markRevoked(env, scope, db, rec, actor, 'host');
  if (actor === rec.subject) {
    if (rec.effect !== 'allow') {
      throw new LibosError('permission_denied', `${actor} may not drop its own ${rec.effect} record ${capId}`, {
        details: { field: 'capId', capId },
      });
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
  throw new LibosError(
    'permission_denied',
    `${actor} may not revoke ${capId}: not its issuer, not its allow-holder, and holds no covering revoke or admin`,
    {
      details: { field: 'capId', capId },
    },
  );
}

/** Host-only revoke that also removes non-revocable records. */
export async function revokeTrustedImpl(env: EngineEnv, scope: ServiceScope, capId: string, reason: string): Promise<void> {
  const db = dbOf(scope);
  const rec = await loadActive(env, db, capId);
  await markRevoked(env, scope, db, rec, 'host', reason);
}
