import type { Right, ServiceScope } from '@libos/sdk';
import { verdictOf, type AuthorityDecision } from '../decision.js';
import { covers, parseResource } from '../resource.js';
import { parseRight } from '../rights.js';
import { authorizeIn, type AuthorizeContext } from './authorize.js';
import type { EngineEnv } from './env.js';
import { getRecord, validChain } from './record-lookup.js';
import { dbOf } from './store.js';

/**
 * Authorizes through a named handle: that exact record must be a live, chain-valid allow of `pid`
 * covering the resource and right with passing constraints, and the global decision must not deny (or ask
 * through another record). A broad grant never validates a forged or stale handle.
 */
export async function authorizeHandleImpl(
  env: EngineEnv,
  scope: ServiceScope,
  pid: string,
  capId: string,
  resource: string,
  right: Right,
  ctx: AuthorizeContext,
): Promise<AuthorityDecision> {
  const db = dbOf(scope);
  const parsed = parseResource(resource);
  const r = parseRight(right);
  const global = await authorizeIn(env, db, pid, parsed.canonical, r, ctx);
  const refuse = (reason: string): AuthorityDecision => {
    const { selectedId: _s, consumeId: _c, ...rest } = global;
    return Object.freeze({
      ...rest,
      allowed: false,
      effect: global.effect === 'deny' ? 'deny' : 'missing',
      policy: global.effect === 'deny' ? 'always_deny' : 'none',
      reason,
      ...(global.effect === 'deny' && global.selectedId ? { selectedId: global.selectedId } : {}),
    });
  };
  if (global.effect === 'deny') return global;
  const rec = await getRecord(env.owners, db, capId);
  if (!rec || rec.subject !== pid) return refuse(`handle ${capId} is not a grant of ${pid}`);
  if (rec.effect !== 'allow' || !rec.rights.includes(r) || !covers(rec.resource, parsed))
    return refuse(`handle ${capId} does not allow ${r} on ${parsed.canonical}`);
  if (!(await validChain(env.owners, db, rec, env.clock.now(), new Map()))) {
    return refuse(`handle ${capId} is revoked, expired or derived from a revoked or expired grant`);
  }
  const v = verdictOf(rec, env.registry.evaluate(rec.id, rec.constraints, { ...ctx, subject: pid }));
  if (v.verdict !== 'ALLOW') return refuse(`handle ${capId}: ${v.reason}`);
  if (global.effect === 'ask' && !v.approvalBound) return global;
  const consumeId = rec.usesRemaining !== null ? rec.id : undefined;
  const { consumeId: _c, ...rest } = global;
  return Object.freeze({
    ...rest,
    allowed: true,
    effect: 'allow',
    policy: consumeId ? 'allow_once' : 'always_allow',
    reason: `allowed through handle ${capId}`,
    selectedId: rec.id,
    ...(consumeId ? { consumeId } : {}),
  });
}
