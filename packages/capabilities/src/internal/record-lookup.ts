import type { CapabilityRecord } from '../capability-record.js';
import { isExpired } from '../expiry.js';
import { parseResource, type ParsedResource } from '../resource.js';
import { getGrant, grantsCovering } from './grant-store.js';
import { OWNER_CAP_PREFIX, ownedTarget, ownerOf, ownerRecordOf, resolveOwner, type OwnerResolvers } from './owner-grants.js';
import type { Db } from './store.js';

/** A record by id: the stored row, else the implicit owner record its `cap_own:` id names, else null. */
export async function getRecord(owners: OwnerResolvers, db: Db, id: string): Promise<CapabilityRecord | null> {
  const stored = await getGrant(db, id);
  if (stored || !id.startsWith(OWNER_CAP_PREFIX)) return stored;
  let resource: ParsedResource;
  try {
    resource = parseResource(id.slice(OWNER_CAP_PREFIX.length));
  } catch {
    return null; // not a well-formed owner id: there is no such record
  }
  const rec = await resolveOwner(owners, db, resource);
  return rec && rec.id === id ? rec : null;
}

/**
 * Walks parent links from `record` (inclusive; a parent may be an implicit owner record). Returns the chain when
 * every member is active and unexpired at `now`, else null. `cache` memoizes loads within one decision.
 */
export async function validChain(
  owners: OwnerResolvers,
  db: Db,
  record: CapabilityRecord,
  now: Date,
  cache: Map<string, CapabilityRecord | null>,
): Promise<CapabilityRecord[] | null> {
  const chain: CapabilityRecord[] = [];
  let cur: CapabilityRecord | null = record;
  const seen = new Set<string>();
  while (cur) {
    if (seen.has(cur.id) || chain.length > 64) return null;
    seen.add(cur.id);
    if (cur.status !== 'active' || isExpired(cur.expiresAt, now)) return null;
    chain.push(cur);
    const pid: string | null = cur.parentCapId;
    if (pid === null) break;
    if (!cache.has(pid)) cache.set(pid, await getRecord(owners, db, pid));
    cur = cache.get(pid) ?? null;
    if (cur === null) return null;
  }
  return chain;
}

/**
 * The active records of `subject` that can cover `resource` (candidates of a decision): stored ones through the
 * (subject, resource) index, plus the implicit owner record when `resource` is an exact resource of an owned kind
 * that `subject` owns and no stored row replaces it (a revoked owner record is stored). Oldest first.
 */
export async function coveringRecords(
  owners: OwnerResolvers,
  db: Db,
  subject: string,
  resource: ParsedResource,
): Promise<CapabilityRecord[]> {
  const target = ownedTarget(owners, resource);
  const rows = await grantsCovering(db, subject, resource, target?.id);
  const active = rows.filter((r) => r.status === 'active');
  if (!target || rows.some((r) => r.id === target.id)) return active;
  const owned = await ownerOf(target.resolver, db, resource.root);
  if (!owned || owned.owner !== subject) return active;
  const implicit = ownerRecordOf(resource, owned);
  const at = active.findIndex((r) => r.issuedAt > implicit.issuedAt || (r.issuedAt === implicit.issuedAt && r.id > implicit.id));
  return at < 0 ? [...active, implicit] : [...active.slice(0, at), implicit, ...active.slice(at)];
}
