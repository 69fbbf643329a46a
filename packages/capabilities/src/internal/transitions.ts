import type { ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import { overlaps } from '../resource.js';
import { audit, type EngineEnv } from './env.js';
import { hasRestrictiveRules, publish } from './grant-publish.js';
import { listImpl } from './list-grants.js';
import { dbOf } from './store.js';
import { parseResource } from '../resource.js';
import type { DuplicationResult } from '../engine-requests.js';

export type { DuplicationResult } from '../engine-requests.js';

/**
 * Duplicating transitions (fork, checkpoint restore): the target gets copies of the source's live
 * records, each derived from its original (revoking the original revokes the copy). Finite records never
 * follow; deny/ask records always follow; an allow loses every right that one of those restrictions
 * overlaps. One `capability.transition_filter` audit.
 */
export async function duplicateAuthorityImpl(
  env: EngineEnv,
  scope: ServiceScope,
  source: string,
  target: string,
  kind: 'fork' | 'checkpoint_restore',
): Promise<DuplicationResult> {
  const db = dbOf(scope);
  const live = await listImpl(env, scope, source, false);
  const restrictions = live.filter((r) => r.effect !== 'allow' || hasRestrictiveRules(r.constraints));
  const copied: CapabilityRecord[] = [];
  const droppedFinite: string[] = [];
  const narrowed: { capId: string; droppedRights: string[] }[] = [];
  for (const rec of live) {
    if (rec.usesRemaining !== null) {
      droppedFinite.push(rec.id);
      continue;
    }
    let rights = rec.rights;
    if (rec.effect === 'allow' && !hasRestrictiveRules(rec.constraints)) {
      const dropped = rights.filter((right) => restrictions.some((x) => x.rights.includes(right) && overlaps(x.resource, rec.resource)));
      if (dropped.length > 0) narrowed.push({ capId: rec.id, droppedRights: dropped });
      rights = rights.filter((right) => !dropped.includes(right));
      if (rights.length === 0) continue;
    }
    const copy: CapabilityRecord = Object.freeze({
      ...rec,
      id: env.ids.next('cap'),
      subject: target,
      rights,
      issuer: `${kind}:${source}`,
      issuerCapId: rec.id,
      parentCapId: rec.id,
      issuedAt: env.clock.now().toISOString(),
    });
    await publish(scope, db, copy, parseResource(copy.resource).kind);
    copied.push(copy);
  }
  await audit(scope, 'capability.transition_filter', target, kind, {
    kind,
    source,
    target,
    copied: copied.map((c) => ({ capId: c.id, from: c.parentCapId, rights: c.rights, effect: c.effect })),
    droppedFinite,
    narrowed,
  });
  return { copied, droppedFinite, narrowed };
}
