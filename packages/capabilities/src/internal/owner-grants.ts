import { foundRows, LibosError, ownerMemoKey, type OwnedResource, type OwnershipResolver } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import { parseResource, RESOURCE_KIND_PATTERN, type ParsedResource } from '../resource.js';
import { parseRights } from '../rights.js';
import { readThrough, type Db } from './store.js';

/** Id prefix of an implicit owner record: `cap_own:<resource>`. Generated ids (`cap_<hex>`) never hold a `:`. */
export const OWNER_CAP_PREFIX = 'cap_own:';

/** The id of the implicit owner record on a canonical exact resource. */
export const ownerCapId = (resource: string): string => `${OWNER_CAP_PREFIX}${resource}`;

/** The ownership resolvers the engine consults, by resource kind. */
export type OwnerResolvers = ReadonlyMap<string, OwnershipResolver>;

/** Validates resolvers (one per kind, kind well-formed). Throws `invalid_arguments` naming the kind. */
export function ownerResolvers(list: readonly OwnershipResolver[] = []): OwnerResolvers {
  const out = new Map<string, OwnershipResolver>();
  for (const r of list) {
    if (typeof r.kind !== 'string' || !RESOURCE_KIND_PATTERN.test(r.kind)) {
      const why = `owners: kind ${JSON.stringify(r.kind)} must match ${RESOURCE_KIND_PATTERN}`;
      throw new LibosError('invalid_arguments', why, { details: { field: 'owners.kind' } });
    }
    if (out.has(r.kind)) {
      const why = `owners: kind ${JSON.stringify(r.kind)} has two ownership resolvers`;
      throw new LibosError('invalid_arguments', why, { details: { field: 'owners.kind', kind: r.kind } });
    }
    out.set(r.kind, r);
  }
  return out;
}

/**
 * The implicit record "owner holds `rights` on `kind:body`": an unlimited, non-delegable, revocable allow that
 * the owner issued itself (exactly what one stored creator grant used to say).
 */
export function ownerRecord(kind: string, owned: OwnedResource): CapabilityRecord {
  const parsed = parseResource(`${kind}:${owned.body}`);
  if (parsed.form !== 'exact') {
    throw new LibosError('internal_error', `owners: the ${kind} resolver named a pattern ${parsed.canonical}; owners own exact resources`);
  }
  const resource = parsed.canonical;
  return Object.freeze({
    id: ownerCapId(resource),
    subject: owned.owner,
    resource,
    rights: parseRights(owned.rights),
    effect: 'allow',
    issuer: owned.owner,
    issuerCapId: null,
    parentCapId: null,
    depth: 0,
    maxDepth: null,
    issuedAt: owned.since,
    expiresAt: null,
    usesRemaining: null,
    status: 'active',
    revokeCause: null,
    delegable: false,
    revocable: true,
    constraints: Object.freeze({}),
    metadata: Object.freeze({ ...(owned.metadata ?? {}) }),
  });
}

/**
 * Implicit owner records by the owner answer they were built from. Answers that come from the store memo are frozen
 * and shared while the memo keeps them, and one answer is for one resource (its memo key names kind and body), so a
 * record is built once per answer instead of once per check (a MemoryView checks every root on every turn).
 */
const OWNER_RECORDS = new WeakMap<OwnedResource, CapabilityRecord>();

/** `ownerRecord` for the exact `resource` whose owner is `owned` (as `ownerOf` answered), kept per frozen answer. */
export function ownerRecordOf(resource: ParsedResource, owned: OwnedResource): CapabilityRecord {
  const kept = OWNER_RECORDS.get(owned);
  if (kept !== undefined && kept.resource === resource.canonical) return kept;
  const record = ownerRecord(resource.kind, { ...owned, body: resource.root });
  if (Object.isFrozen(owned)) OWNER_RECORDS.set(owned, record);
  return record;
}

/** The resolver and the id of the implicit record for an exact resource of an owned kind, or null. */
export function ownedTarget(
  owners: OwnerResolvers,
  resource: ParsedResource,
): { readonly resolver: OwnershipResolver; readonly id: string } | null {
  if (resource.form !== 'exact') return null;
  const resolver = owners.get(resource.kind);
  return resolver ? { resolver, id: ownerCapId(resource.canonical) } : null;
}

/** The implicit owner record on an exact resource as the resolver sees it now (any owner), or null. */
export async function resolveOwner(owners: OwnerResolvers, db: Db, resource: ParsedResource): Promise<CapabilityRecord | null> {
  const target = ownedTarget(owners, resource);
  if (!target) return null;
  const owned = await ownerOf(target.resolver, db, resource.root);
  return owned ? ownerRecordOf(resource, owned) : null;
}

/**
 * The resolver's owner of `kind:<body>`, through the store memo when the resolver names the tables it reads (a call
 * checks the same Object more than once). Shared answers are frozen.
 */
export function ownerOf(resolver: OwnershipResolver, db: Db, body: string): Promise<OwnedResource | null> {
  const load = () => resolver.ownerOf(db, body);
  if (!resolver.tables) return load();
  const key = ownerMemoKey(resolver.kind, body);
  if (resolver.keyed) return readFound(db, resolver.tables.map(foundRows), key, load);
  return readThrough(db, resolver.tables, key, async () => {
    const owned = await load();
    return owned ? Object.freeze(owned) : null;
  });
}

/** Thrown inside a memo load so that nothing is cached for a key lookup that found nothing. */
const NOT_FOUND = new Error('owner-grants: not found (never escapes readFound)');

/**
 * A keyed resolver's owner through the memo on `foundRows` of its tables: an owner found stays cached while rows are
 * only inserted (a new Object elsewhere), and a lookup that found nothing is never cached (an insert may add it).
 */
async function readFound(
  db: Db,
  tables: readonly string[],
  key: string,
  load: () => Promise<OwnedResource | null>,
): Promise<OwnedResource | null> {
  try {
    return await readThrough(db, tables, key, async () => {
      const owned = await load();
      if (owned === null) throw NOT_FOUND;
      return Object.freeze(owned);
    });
  } catch (err) {
    if (err === NOT_FOUND) return null;
    throw err;
  }
}

/** Every implicit owner record `subject` holds, minus those a stored row replaces (`storedIds`). */
export async function ownerRecordsOf(
  owners: OwnerResolvers,
  db: Db,
  subject: string,
  storedIds: ReadonlySet<string>,
): Promise<CapabilityRecord[]> {
  const out: CapabilityRecord[] = [];
  for (const [kind, resolver] of owners) {
    for (const owned of await resolver.ownedBy(db, subject)) {
      if (owned.owner !== subject) continue;
      const rec = ownerRecord(kind, owned);
      if (!storedIds.has(rec.id)) out.push(rec);
    }
  }
  return out;
}
