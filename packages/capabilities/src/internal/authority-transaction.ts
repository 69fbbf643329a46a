import { LibosError, type ServiceScope } from '@libos/sdk';
import type { AuthorityDecision } from '../decision.js';
import { authorizeIn, auditDecision } from './authorize.js';
import type { EngineEnv } from './env.js';
import { commitReservationImpl, reserveImpl } from './reservations.js';
import { dbOf } from './store.js';
import type { AuthorityCheck } from '../engine-requests.js';

export type { AuthorityCheck } from '../engine-requests.js';

/**
 * `AuthorityTransaction`: in the scope's transaction, re-authorizes every check (any denial throws),
 * reserves each selected finite record once, runs `fn`, then commits every reservation (a lost reservation
 * throws). Any throw leaves the caller's transaction to roll everything back.
 */
export async function withAuthorityImpl<T>(
  env: EngineEnv,
  scope: ServiceScope,
  pid: string,
  checks: readonly AuthorityCheck[],
  fn: (decisions: readonly AuthorityDecision[]) => Promise<T>,
): Promise<T> {
  const db = dbOf(scope);
  const decisions: AuthorityDecision[] = [];
  for (const c of checks) {
    const d = await authorizeIn(env, db, pid, c.resource, c.right, c.ctx ?? {});
    await auditDecision(scope, d);
    if (!d.allowed) {
      throw new LibosError(
        d.effect === 'ask' ? 'approval_required' : 'permission_denied',
        `${pid} may not ${c.right} ${d.resource}: ${d.reason}`,
        {
          details: { resource: d.resource, right: d.right, effect: d.effect, selectedId: d.selectedId ?? null },
        },
      );
    }
    decisions.push(d);
  }
  const reserved = new Map<string, string>();
  for (const d of decisions) {
    if (!d.consumeId || reserved.has(d.consumeId)) continue;
    const id = await reserveImpl(env, scope, d);
    if (id) reserved.set(d.consumeId, id);
  }
  const out = await fn(decisions);
  for (const [capId, resId] of reserved) {
    if (!(await commitReservationImpl(env, scope, resId))) {
      throw new LibosError('permission_denied', `the reserved use of ${capId} was invalidated before the effect committed`, {
        details: { capId, reservationId: resId },
      });
    }
  }
  return out;
}
