import { preparedQuery, rememberOwner, type OwnedResource, type OwnershipResolver, type Right, type StoreMemo } from '@libos/sdk';
import { omDb, type OmDb } from './schema.js';

/** Rights a creator holds on its new Object: `write` only when it is mutable. */
export function creatorRights(immutable: boolean): Right[] {
  const rights: Right[] = ['read', 'link', 'diff', 'materialize', 'delete', 'grant'];
  return immutable ? rights : [...rights, 'write'];
}

/** Attribution on an owner's implicit record (what the stored creator grant carried). */
const OWNER_METADATA = Object.freeze({ granted_by: '@libos/object-memory', reason: 'creator handle' });

/** An Object's owner, compiled once per store: every check on an Object resolves it. */
const OWNER_OF = preparedQuery(1, (db: OmDb, [oid]) =>
  db.selectFrom('om_objects').select(['oid', 'owner_id', 'immutable', 'created_at']).where('oid', '=', oid!),
);

function owned(row: { oid: string; owner_id: string; immutable: number; created_at: string }): OwnedResource {
  return {
    body: row.oid,
    owner: row.owner_id,
    rights: creatorRights(Number(row.immutable) === 1),
    since: row.created_at,
    metadata: OWNER_METADATA,
  };
}

/**
 * Owners of `object:<oid>`: the Object's `owner_id` holds the creator rights (`read link diff materialize delete
 * grant`, plus `write` when mutable) since the Object was created, whatever its lifecycle, exactly as the one
 * creator grant per Object did. The authority engine asks here instead of storing that grant.
 */
export const objectOwners: OwnershipResolver = {
  kind: 'object',
  tables: ['om_objects'],
  // By oid, the primary key: creating other Objects never changes an owner found (only an update or delete does).
  keyed: true,
  async ownerOf(store, oid) {
    const db = omDb(store);
    const row = (await db.executeQuery(OWNER_OF(db, [oid]))).rows[0];
    return row === undefined ? null : owned(row);
  },
  async ownedBy(store, owner) {
    const rows = await omDb(store)
      .selectFrom('om_objects')
      .select(['oid', 'owner_id', 'immutable', 'created_at'])
      .where('owner_id', '=', owner)
      .orderBy('created_at')
      .orderBy('oid')
      .execute();
    return rows.map(owned);
  },
};

/**
 * Tells the store memo the owner of an Object whose row this transaction has just written or read (`record`, as the
 * row is now), so the check that follows (an append's, a creation's ownership record) reads no owner row (K-9.29).
 */
export function rememberObjectOwner(
  scope: { readonly memo?: StoreMemo },
  record: { readonly oid: string; readonly ownerId: string; readonly immutable: boolean; readonly createdAt: string },
): void {
  const row = { oid: record.oid, owner_id: record.ownerId, immutable: record.immutable ? 1 : 0, created_at: record.createdAt };
  rememberOwner(scope, objectOwners, owned(row));
}
