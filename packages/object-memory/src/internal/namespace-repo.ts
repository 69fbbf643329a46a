import { namespaceFromRow, type NamespaceRecord } from './records.js';
import type { OmDb } from './schema.js';

/** The namespace row, or null. */
export async function getNamespace(db: OmDb, namespace: string): Promise<NamespaceRecord | null> {
  const row = await db.selectFrom('om_namespaces').selectAll().where('namespace', '=', namespace).executeTakeFirst();
  return row === undefined ? null : namespaceFromRow(row);
}

export async function insertNamespace(
  db: OmDb,
  ns: {
    readonly namespace: string;
    readonly parentNamespace: string | null;
    readonly metadata: unknown;
    readonly createdBy: string;
    readonly at: string;
  },
): Promise<void> {
  await db
    .insertInto('om_namespaces')
    .values({
      namespace: ns.namespace,
      parent_namespace: ns.parentNamespace,
      metadata: JSON.stringify(ns.metadata),
      created_by: ns.createdBy,
      created_at: ns.at,
      updated_at: ns.at,
    })
    .execute();
}

/** One page of direct children of `parent`, by name ascending. */
export async function childNamespacesPage(db: OmDb, parent: string, offset: number, limit: number): Promise<NamespaceRecord[]> {
  const rows = await db
    .selectFrom('om_namespaces')
    .selectAll()
    .where('parent_namespace', '=', parent)
    .orderBy('namespace', 'asc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(namespaceFromRow);
}
