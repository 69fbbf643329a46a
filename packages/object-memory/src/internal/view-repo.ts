import { LibosError, newId, preparedQuery } from '@libos/sdk';
import type { DataLabels } from '@libos/sdk';
import type { LifecycleState, ObjectMetadata, ObjectRecord } from '../object-record.js';
import { parsedColumn } from './parsed-column.js';
import type { OmDb } from './schema.js';

/** A MemoryView filter: fields AND-ed, filters OR-ed. */
export interface ViewFilter {
  readonly type?: string;
  readonly tags?: readonly string[];
  readonly text?: string;
}

export type ViewMode = 'read_only' | 'copy_on_write' | 'mutable' | 'ephemeral';

export interface ViewRecord {
  readonly viewId: string;
  readonly ownerPid: string;
  readonly mode: ViewMode;
  readonly filters: readonly ViewFilter[];
  readonly rightsPolicy: string;
  readonly createdFrom: string;
}

export interface ViewRoot {
  readonly oid: string;
  readonly position: number;
  readonly capabilityId: string | null;
}

/** The hot statements of views (every turn renders one, every created Object joins one), compiled once per store. */
const VIEW_OF = preparedQuery(1, (db: OmDb, [pid]) => db.selectFrom('om_views').selectAll().where('owner_pid', '=', pid!));
const ROOTS_OF = preparedQuery(1, (db: OmDb, [viewId]) =>
  db.selectFrom('om_view_roots').selectAll().where('view_id', '=', viewId!).orderBy('position', 'asc'),
);

/** Every root of a view with the columns of its Object a render needs, in one statement (no per-root lookup). */
const ROOT_OBJECTS_OF = preparedQuery(1, (db: OmDb, [viewId]) =>
  db
    .selectFrom('om_view_roots as r')
    .leftJoin('om_objects as o', 'o.oid', 'r.oid')
    .select(['r.oid as root_oid', 'r.capability_id', 'o.oid as object_oid', 'o.namespace', 'o.name', 'o.type', 'o.version'])
    .select(['o.metadata', 'o.labels', 'o.lifecycle_state', 'o.updated_at', 'o.updated_seq'])
    .where('r.view_id', '=', viewId!)
    .orderBy('r.position', 'asc'),
);

/** What a MemoryView render reads of a root's Object (no provenance, which grows with what its creator read). */
export type RootObject = Pick<
  ObjectRecord,
  'oid' | 'namespace' | 'name' | 'type' | 'version' | 'metadata' | 'labels' | 'lifecycle' | 'updatedAt' | 'updatedSeq'
>;

/** A root of a view and its Object, or null when no Object has that oid. */
export interface ViewRootObject {
  readonly oid: string;
  readonly capabilityId: string | null;
  readonly object: RootObject | null;
}

export async function getView(db: OmDb, pid: string): Promise<ViewRecord | null> {
  const row = (await db.executeQuery(VIEW_OF(db, [pid]))).rows[0];
  if (row === undefined) return null;
  return {
    viewId: row.view_id,
    ownerPid: row.owner_pid,
    mode: row.mode as ViewMode,
    filters: JSON.parse(row.filters) as ViewFilter[],
    rightsPolicy: row.rights_policy,
    createdFrom: row.created_from,
  };
}

/** The pid's view, created (empty, with `mode`) if it has none. */
export async function ensureView(db: OmDb, pid: string, mode: ViewMode, createdFrom: string, at: string): Promise<ViewRecord> {
  const existing = await getView(db, pid);
  if (existing !== null) return existing;
  const view: ViewRecord = { viewId: newId('view'), ownerPid: pid, mode, filters: [], rightsPolicy: 'plan_first', createdFrom };
  await db
    .insertInto('om_views')
    .values({
      view_id: view.viewId,
      owner_pid: pid,
      mode,
      filters: '[]',
      rights_policy: view.rightsPolicy,
      created_from: createdFrom,
      created_at: at,
    })
    .execute();
  return view;
}

export async function setViewFilters(db: OmDb, viewId: string, filters: readonly ViewFilter[]): Promise<void> {
  await db
    .updateTable('om_views')
    .set({ filters: JSON.stringify(filters) })
    .where('view_id', '=', viewId)
    .execute();
}

export async function viewRoots(db: OmDb, viewId: string): Promise<ViewRoot[]> {
  const { rows } = await db.executeQuery(ROOTS_OF(db, [viewId]));
  return rows.map((r) => ({ oid: r.oid, position: Number(r.position), capabilityId: r.capability_id }));
}

/**
 * The roots of a view in order, each with its Object, in one statement: a render of a view with many roots (every
 * published tool result is one) used to look each Object up on its own.
 */
export async function viewRootObjects(db: OmDb, viewId: string): Promise<ViewRootObject[]> {
  const { rows } = await db.executeQuery(ROOT_OBJECTS_OF(db, [viewId]));
  return rows.map((r) => ({
    oid: r.root_oid,
    capabilityId: r.capability_id,
    object:
      r.object_oid === null
        ? null
        : {
            oid: r.object_oid,
            namespace: r.namespace!,
            name: r.name!,
            type: r.type!,
            version: Number(r.version),
            metadata: parsedColumn<ObjectMetadata>(r.metadata!),
            labels: parsedColumn<DataLabels>(r.labels!),
            lifecycle: r.lifecycle_state as LifecycleState,
            updatedAt: r.updated_at!,
            updatedSeq: Number(r.updated_seq),
          },
  }));
}

/** Appends `oid` as the last root unless it is already a root. Returns true when added. */
export async function addRoot(db: OmDb, viewId: string, oid: string, capabilityId: string | null): Promise<boolean> {
  const existing = await db
    .selectFrom('om_view_roots')
    .select('oid')
    .where('view_id', '=', viewId)
    .where('oid', '=', oid)
    .executeTakeFirst();
  if (existing !== undefined) return false;
  const last = await db
    .selectFrom('om_view_roots')
    .select((eb) => eb.fn.max('position').as('position'))
    .where('view_id', '=', viewId)
    .executeTakeFirst();
  const position = last?.position == null ? 0 : Number(last.position) + 1;
  await db.insertInto('om_view_roots').values({ view_id: viewId, oid, position, capability_id: capabilityId }).execute();
  return true;
}

/**
 * Appends a new Object's handle as the last root of the pid's view, creating the view (`read_only`) if it has
 * none. One statement when the view exists. The oid is new, so it cannot be a root already.
 */
export async function attachNewRoot(
  db: OmDb,
  pid: string,
  oid: string,
  capabilityId: string | null,
  createdFrom: string,
  at: string,
): Promise<void> {
  if (await insertLastRoot(db, pid, oid, capabilityId)) return;
  await ensureView(db, pid, 'read_only', createdFrom, at);
  if (!(await insertLastRoot(db, pid, oid, capabilityId))) {
    throw new LibosError('internal_error', `view of ${pid}: the root ${oid} was not attached after the view was created`, {
      details: { pid, oid },
    });
  }
}

/** Inserts `oid` after the last root of the pid's view, reading the view and the position in the same statement. */
async function insertLastRoot(db: OmDb, pid: string, oid: string, capabilityId: string | null): Promise<boolean> {
  const result = await db.executeQuery(INSERT_LAST_ROOT(db, [pid, oid, capabilityId]));
  return Number(result.numAffectedRows ?? 0) === 1;
}

const INSERT_LAST_ROOT = preparedQuery(3, (db: OmDb, [pid, oid, capabilityId]) =>
  db
    .insertInto('om_view_roots')
    .columns(['view_id', 'oid', 'position', 'capability_id'])
    .expression((eb) =>
      eb
        .selectFrom('om_views as v')
        .where('v.owner_pid', '=', pid!)
        .select((s) => [
          'v.view_id',
          s.val(oid!).as('oid'),
          s.fn
            .coalesce(
              s
                .selectFrom('om_view_roots as r')
                .whereRef('r.view_id', '=', 'v.view_id')
                .select((r) => r(r.fn.max('r.position'), '+', 1).as('next')),
              s.lit(0),
            )
            .as('position'),
          s.val<string | null>(capabilityId!).as('capability_id'),
        ]),
    ),
);
