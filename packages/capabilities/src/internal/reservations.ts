import { LibosError, type ServiceScope } from '@libos/sdk';
import type { AuthorityDecision } from '../decision.js';
import { audit, type EngineEnv } from './env.js';
import { casSpend } from './grant-store.js';
import { T, changed, dbOf } from './store.js';

interface ReservationRow {
  id: string;
  cap_id: string;
  pid: string;
  n: number;
  status: string;
}

/**
 * Reserves the finite use a decision selected (CAS decrement, row `reserved`). Returns the reservation id,
 * or null when the decision needs no use (unlimited grant). Throws `permission_denied` when the use is gone.
 */
export async function reserveImpl(
  env: EngineEnv,
  scope: ServiceScope,
  decision: AuthorityDecision | { subject: string; allowed: boolean; consumeId?: string; resource: string; right: string },
): Promise<string | null> {
  if (!decision.allowed)
    throw new LibosError('permission_denied', `reserve: the decision for ${decision.resource} ${decision.right} is not an allow`, {
      details: { resource: decision.resource },
    });
  if (!decision.consumeId) return null;
  const db = dbOf(scope);
  const now = env.clock.now().toISOString();
  const left = await casSpend(db, decision.consumeId, 1, now);
  if (left === null) {
    throw new LibosError(
      'permission_denied',
      `${decision.subject} may not ${decision.right} ${decision.resource}: the one-use grant ${decision.consumeId} ` +
        `is already spent or revoked`,
      {
        details: { capId: decision.consumeId },
      },
    );
  }
  const id = env.ids.next('res');
  await db
    .insertInto(T.reservations)
    .values({ id, cap_id: decision.consumeId, pid: decision.subject, n: 1, status: 'reserved', created_at: now, settled_at: null })
    .execute();
  await audit(scope, 'capability.reserve_use', decision.consumeId, 'reserved', {
    reservationId: id,
    capId: decision.consumeId,
    subject: decision.subject,
    usesRemaining: left,
  });
  if (left === 0)
    await scope.events.emit('capability.revoked', { capId: decision.consumeId, subject: decision.subject, cause: 'exhausted' });
  return id;
}

/** reserved → committed. False when the reservation is not (or no longer) reserved. */
export async function commitReservationImpl(env: EngineEnv, scope: ServiceScope, reservationId: string): Promise<boolean> {
  const db = dbOf(scope);
  const res = await db
    .updateTable(T.reservations)
    .set({ status: 'committed', settled_at: env.clock.now().toISOString() })
    .where('id', '=', reservationId)
    .where('status', '=', 'reserved')
    .executeTakeFirst();
  const ok = changed(res) === 1;
  await audit(scope, 'capability.commit_reserved_use', reservationId, ok ? 'committed' : 'not_reserved', { reservationId });
  return ok;
}

/**
 * reserved → restored: gives the use back (an exhausted grant becomes active again). Only when the provider
 * certified the effect never started. Returns the uses now left, or undefined when nothing was restorable
 * (committed, invalidated by revoke, abandoned, unknown).
 */
export async function restoreReservationImpl(env: EngineEnv, scope: ServiceScope, reservationId: string): Promise<number | undefined> {
  const db = dbOf(scope);
  const now = env.clock.now().toISOString();
  const row = (await db.selectFrom(T.reservations).selectAll().where('id', '=', reservationId).executeTakeFirst()) as
    | ReservationRow
    | undefined;
  if (row?.status !== 'reserved') {
    await audit(scope, 'capability.restore_reserved_use_skipped', reservationId, 'skipped', {
      reservationId,
      status: row?.status ?? 'unknown',
    });
    return undefined;
  }
  const res = await db
    .updateTable(T.reservations)
    .set({ status: 'restored', settled_at: now })
    .where('id', '=', reservationId)
    .where('status', '=', 'reserved')
    .executeTakeFirst();
  if (changed(res) !== 1) return undefined;
  const g = (await db
    .selectFrom(T.grants)
    .select(['uses_remaining', 'status', 'revoke_cause', 'subject'])
    .where('id', '=', row.cap_id)
    .executeTakeFirstOrThrow()) as {
    uses_remaining: number;
    status: string;
    revoke_cause: string | null;
    subject: string;
  };
  const uses = Number(g.uses_remaining) + Number(row.n);
  const reactivate = g.status === 'revoked' && g.revoke_cause === 'exhausted';
  await db
    .updateTable(T.grants)
    .set(reactivate ? { uses_remaining: uses, status: 'active', revoke_cause: null, revoked_at: null } : { uses_remaining: uses })
    .where('id', '=', row.cap_id)
    .where('uses_remaining', '=', g.uses_remaining)
    .execute();
  await audit(scope, 'capability.restore_reserved_use', row.cap_id, 'restored', { reservationId, capId: row.cap_id, usesRemaining: uses });
  if (reactivate) await scope.events.emit('capability.granted', { capId: row.cap_id, subject: g.subject, cause: 'restored' });
  return uses;
}

/** Reopen recovery: every unproven `reserved` row becomes `abandoned` (its use stays spent). */
export async function recoverReservationsImpl(env: EngineEnv, scope: ServiceScope): Promise<number> {
  const db = dbOf(scope);
  const res = await db
    .updateTable(T.reservations)
    .set({ status: 'abandoned', settled_at: env.clock.now().toISOString() })
    .where('status', '=', 'reserved')
    .executeTakeFirst();
  const n = changed(res);
  if (n > 0) await audit(scope, 'capability.reservations_abandoned', undefined, 'abandoned', { count: n });
  return n;
}
