import type { OwnedResource, OwnershipResolver } from '@libos/sdk';
import { omDb } from './schema.js';
import { creatorRights } from './store-object.js';

/** Attribution on an owner's implicit record (what the stored creator grant carried). */
const OWNER_METADATA = Object.freeze({ granted_by: '@libos/object-memory', reason: 'creator handle' });

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
  async ownerOf(store, oid) {
    const row = await omDb(store)
      .selectFrom('om_objects')
      .select(['oid', 'owner_id', 'immutable', 'created_at'])
      .where('oid', '=', oid)
      .executeTakeFirst();
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
