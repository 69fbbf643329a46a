import { preparedQuery, type OwnedResource, type OwnershipResolver } from '@libos/sdk';
import { omDb, type OmDb } from './schema.js';
import { creatorRights } from './store-object.js';

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
