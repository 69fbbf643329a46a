import { preparedQuery } from '@libos/sdk';
import { namespaceFromRow, type NamespaceRecord } from './records.js';
import type { OmDb } from './schema.js';

/** The namespace row, or null. */
export async function getNamespace(db: OmDb, namespace: string): Promise<NamespaceRecord | null> {
  const row = await db.selectFrom('om_namespaces').selectAll().where('namespace', '=', namespace).executeTakeFirst();
  return row === undefined ? null : namespaceFromRow(row);
}

/** A namespace row, compiled once per store (every process's first Object makes one or two). */
const INSERT_NAMESPACE = preparedQuery(5, (db: OmDb, [namespace, parentNamespace, metadata, createdBy, at]) =>
  db.insertInto('om_namespaces').values({
    namespace: namespace!,
    parent_namespace: parentNamespace as string | null,
    metadata: metadata!,
    created_by: createdBy!,
    created_at: at!,
    updated_at: at!,
  }),
);

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
  await db.executeQuery(INSERT_NAMESPACE(db, [ns.namespace, ns.parentNamespace, JSON.stringify(ns.metadata), ns.createdBy, ns.at]));
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
