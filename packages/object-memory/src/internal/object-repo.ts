import { preparedQuery, preparedQueryPerSize, type DataLabels } from '@libos/sdk';
import { sql } from 'kysely';
import type { ObjectMetadata } from './metadata.js';
import { parsedColumn } from './parsed-column.js';
import { objectFromRow, type ObjectRecord, type Provenance } from './records.js';
import type { LifecycleState, ObjectTable, OmDb, OwnerKind } from './schema.js';

/** Lifecycle states that hold a name and appear in listings. */
export const VISIBLE_STATES: readonly LifecycleState[] = ['live', 'payload_unavailable'];

/**
 * The same states as SQL literals: only with literals (not bound parameters) can the planner prove a name lookup
 * matches the partial unique index `om_objects_live_name`, so it is one index probe, not a scan of the namespace.
 */
const VISIBLE_LITERALS = VISIBLE_STATES.map((state) => sql.lit(state));

/** The next write sequence number, computed inside the statement that writes it (the transaction serializes writers). */
const NEXT_SEQ = sql<number>`(select coalesce(max(updated_seq), 0) + 1 from om_objects)`;

/** The hot statements of this file, each compiled once per store. */
const OBJECT_BY_OID = preparedQuery(1, (db: OmDb, [oid]) => db.selectFrom('om_objects').selectAll().where('oid', '=', oid!));

export async function getObject(db: OmDb, oid: string): Promise<ObjectRecord | null> {
  const row = (await db.executeQuery(OBJECT_BY_OID(db, [oid]))).rows[0];
  return row === undefined ? null : objectFromRow(row);
}

/** Parents looked up at once: a statement per 256 (a tool result is parented by every Object its process read). */
const PARENTS_AT_ONCE = 256;
const PARENTS = preparedQueryPerSize(
  (n) => n,
  (db: OmDb, oids) => db.selectFrom('om_objects').select(['oid', 'lifecycle_state', 'labels']).where('oid', 'in', oids),
);

/**
 * The lifecycle and labels of each of `oids` that exists, by oid, in one statement per 256 (each statement compiled
 * once per store for each power-of-two size, the list padded with its first oid).
 */
export async function lifecyclesAndLabels(
  db: OmDb,
  oids: readonly string[],
): Promise<Map<string, { readonly lifecycle: LifecycleState; readonly labels: DataLabels }>> {
  const out = new Map<string, { readonly lifecycle: LifecycleState; readonly labels: DataLabels }>();
  for (let i = 0; i < oids.length; i += PARENTS_AT_ONCE) {
    const part = oids.slice(i, i + PARENTS_AT_ONCE);
    const size = 2 ** Math.ceil(Math.log2(part.length));
    const args = part.concat(Array.from({ length: size - part.length }, () => part[0]!));
    for (const r of (await db.executeQuery(PARENTS(size)(db, args))).rows) {
      out.set(r.oid, { lifecycle: r.lifecycle_state as LifecycleState, labels: parsedColumn<DataLabels>(r.labels) });
    }
  }
  return out;
}

/** The live (or payload-unavailable) Object holding `name` in `namespace`, or null. */
export async function findObjectByName(db: OmDb, namespace: string, name: string): Promise<ObjectRecord | null> {
  const row = await db
    .selectFrom('om_objects')
    .selectAll()
    .where('namespace', '=', namespace)
    .where('name', '=', name)
    .where('lifecycle_state', 'in', VISIBLE_LITERALS)
    .executeTakeFirst();
  return row === undefined ? null : objectFromRow(row);
}

/** Whether a namespace exists, and the live (or payload-unavailable) Object holding a name in it. */
export interface NameLookup {
  readonly namespaceExists: boolean;
  readonly object: ObjectRecord | null;
}

/**
 * One statement for what read, append and create check in turn: the namespace row and the Object holding
 * `name` in it (two index probes).
 */
const LOOKUP_NAME = preparedQuery(2, (db: OmDb, [namespace, name]) =>
  db
    .selectFrom('om_namespaces as n')
    .leftJoin('om_objects as o', (join) =>
      join.onRef('o.namespace', '=', 'n.namespace').on('o.name', '=', name!).on('o.lifecycle_state', 'in', VISIBLE_LITERALS),
    )
    .selectAll('o')
    .where('n.namespace', '=', namespace!),
);

export async function lookupName(db: OmDb, namespace: string, name: string): Promise<NameLookup> {
  const row = (await db.executeQuery(LOOKUP_NAME(db, [namespace, name]))).rows[0];
  if (row === undefined) return { namespaceExists: false, object: null };
  return { namespaceExists: true, object: row.oid === null ? null : objectFromRow(row as ObjectTable) };
}

export interface NewObjectRow {
  readonly oid: string;
  readonly namespace: string;
  readonly name: string;
  readonly type: string;
  readonly immutable: boolean;
  readonly metadata: ObjectMetadata;
  readonly labels: DataLabels;
  readonly provenance: Provenance;
  readonly payloadMarker: string;
  /** The runtime instance that holds the payload (`ServiceScope.runtime`), null without one. */
  readonly payloadInstance: string | null;
  readonly ownerKind: OwnerKind;
  readonly ownerId: string;
  readonly createdBy: string;
  readonly at: string;
}

/** Inserts a new Object row at version 1, taking the next write sequence number in the same statement. */
export async function insertObject(db: OmDb, o: NewObjectRow): Promise<void> {
  const { oid, namespace, name, type, payloadMarker, ownerKind, ownerId, createdBy, at } = o;
  const json = [JSON.stringify(o.metadata), JSON.stringify(o.labels), JSON.stringify(o.provenance)];
  const args = [
    oid,
    namespace,
    name,
    type,
    o.immutable ? 1 : 0,
    ...json,
    payloadMarker,
    ownerKind,
    ownerId,
    createdBy,
    at,
    o.payloadInstance,
  ];
  await db.executeQuery(INSERT_OBJECT(db, args));
}

const INSERT_OBJECT = preparedQuery(
  14,
  (
    db: OmDb,
    [oid, namespace, name, type, immutable, metadata, labels, provenance, payload, ownerKind, ownerId, createdBy, at, payloadInstance],
  ) =>
    db.insertInto('om_objects').values({
      oid: oid!,
      namespace: namespace!,
      name: name!,
      type: type!,
      schema_version: '1',
      version: 1,
      immutable: immutable as unknown as number,
      metadata: metadata!,
      labels: labels!,
      provenance: provenance!,
      payload: payload!,
      owner_kind: ownerKind as OwnerKind,
      owner_id: ownerId!,
      lifecycle_state: 'live',
      created_by: createdBy!,
      created_at: at!,
      updated_at: at!,
      updated_seq: NEXT_SEQ,
      deleted_at: null,
      payload_instance: payloadInstance as string | null,
    }),
);

export interface AppendWrite {
  readonly oid: string;
  /** The (version, owner, live) the new state was computed from. */
  readonly expectVersion: number;
  readonly expectOwnerKind: OwnerKind;
  readonly expectOwnerId: string;
  readonly metadata: ObjectMetadata;
  readonly labels: DataLabels;
  readonly provenance: Provenance;
  readonly at: string;
}

/**
 * Conditional write of an append, one statement (the next write sequence number included): true when the row
 * still had the expected version, owner and live state.
 */
export async function writeAppend(db: OmDb, w: AppendWrite): Promise<boolean> {
  const json = [JSON.stringify(w.metadata), JSON.stringify(w.labels), JSON.stringify(w.provenance)];
  const args = [w.expectVersion + 1, ...json, w.at, w.oid, w.expectVersion, w.expectOwnerKind, w.expectOwnerId];
  const result = await db.executeQuery(WRITE_APPEND(db, args));
  return Number(result.numAffectedRows ?? 0n) === 1;
}

const WRITE_APPEND = preparedQuery(
  9,
  (db: OmDb, [version, metadata, labels, provenance, at, oid, expectVersion, expectOwnerKind, expectOwnerId]) =>
    db
      .updateTable('om_objects')
      .set({
        version: version as unknown as number,
        metadata: metadata!,
        labels: labels!,
        provenance: provenance!,
        updated_at: at!,
        updated_seq: NEXT_SEQ,
      })
      .where('oid', '=', oid!)
      .where('version', '=', expectVersion as unknown as number)
      .where('owner_kind', '=', expectOwnerKind as OwnerKind)
      .where('owner_id', '=', expectOwnerId!)
      .where('lifecycle_state', '=', 'live'),
);

/** One page of a namespace's listed Objects, newest first (updated, created, write sequence), then oid. */
export async function objectsPage(db: OmDb, namespace: string, offset: number, limit: number): Promise<ObjectRecord[]> {
  const rows = await db
    .selectFrom('om_objects')
    .selectAll()
    .where('namespace', '=', namespace)
    .where('lifecycle_state', 'in', VISIBLE_STATES)
    .orderBy('updated_at', 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('updated_seq', 'desc')
    .orderBy('oid', 'asc')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(objectFromRow);
}

/** Listed Objects for host inspection: optionally one namespace and/or one owner process, newest first. */
export async function listVisibleObjects(
  db: OmDb,
  q: { readonly namespace?: string; readonly ownerPid?: string; readonly limit: number },
): Promise<ObjectRecord[]> {
  let sel = db.selectFrom('om_objects').selectAll().where('lifecycle_state', 'in', VISIBLE_STATES);
  if (q.namespace !== undefined) sel = sel.where('namespace', '=', q.namespace);
  if (q.ownerPid !== undefined) sel = sel.where('owner_id', '=', q.ownerPid);
  const rows = await sel.orderBy('updated_at', 'desc').orderBy('updated_seq', 'desc').orderBy('oid', 'asc').limit(q.limit).execute();
  return rows.map(objectFromRow);
}

/** Marks a row superseded (a new Object took its name). */
export async function markSuperseded(db: OmDb, oid: string, at: string): Promise<void> {
  await db.updateTable('om_objects').set({ lifecycle_state: 'superseded', updated_at: at }).where('oid', '=', oid).execute();
}

/** Marks live rows payload-unavailable with the given marker. */
export async function markPayloadUnavailable(db: OmDb, oids: readonly string[], marker: string): Promise<void> {
  for (let i = 0; i < oids.length; i += 500) {
    await db
      .updateTable('om_objects')
      .set({ lifecycle_state: 'payload_unavailable', payload: marker })
      .where('oid', 'in', oids.slice(i, i + 500))
      .where('lifecycle_state', '=', 'live')
      .execute();
  }
}
