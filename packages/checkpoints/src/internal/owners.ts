import type { OwnershipResolver } from '@libos/sdk';
import { checkpointsDb } from './store.js';
import { isId } from '@libos/sdk';

/**
 * Owners of `checkpoint:<id>`: the process whose subtree it captured reads it by owning it (the one right creating a
 * checkpoint gives), so no grant row is stored, and no restore of that subtree can revoke it.
 */
export const checkpointOwners: OwnershipResolver = {
  kind: 'checkpoint',
  async ownerOf(store, body) {
    if (!isId(body, 'ckpt')) return null;
    const row = await checkpointsDb(store)
      .selectFrom('checkpoints')
      .select(['checkpoint_id', 'owner_pid', 'captured_at'])
      .where('checkpoint_id', '=', body)
      .executeTakeFirst();
    return row
      ? {
          body: row.checkpoint_id,
          owner: row.owner_pid,
          rights: ['read'],
          since: row.captured_at,
          metadata: { granted_by: '@libos/checkpoints', reason: 'checkpoint owner' },
        }
      : null;
  },
  async ownedBy(store, owner) {
    const rows = await checkpointsDb(store)
      .selectFrom('checkpoints')
      .select(['checkpoint_id', 'owner_pid', 'captured_at'])
      .where('owner_pid', '=', owner)
      .orderBy('seq')
      .execute();
    return rows.map((row) => ({
      body: row.checkpoint_id,
      owner: row.owner_pid,
      rights: ['read'],
      since: row.captured_at,
      metadata: { granted_by: '@libos/checkpoints', reason: 'checkpoint owner' },
    }));
  },
};
