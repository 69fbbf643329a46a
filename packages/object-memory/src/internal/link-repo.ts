import type { ObjectLink } from '@libos/sdk';
import type { LinkTable, OmDb } from './schema.js';

export const linkFromRow = (r: LinkTable): ObjectLink => ({
  link_id: r.link_id,
  src_oid: r.src_oid,
  dst_oid: r.dst_oid,
  relation: r.relation,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  created_at: r.created_at,
});

export async function insertLink(db: OmDb, row: LinkTable): Promise<void> {
  await db.insertInto('om_links').values(row).execute();
}

/** Links whose source is `oid`, oldest first. */
export async function linksFrom(db: OmDb, oid: string): Promise<ObjectLink[]> {
  const rows = await db.selectFrom('om_links').selectAll().where('src_oid', '=', oid).orderBy('created_at').orderBy('link_id').execute();
  return rows.map(linkFromRow);
}
