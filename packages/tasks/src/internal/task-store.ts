import { sql, type Kysely } from 'kysely';
import type { Migration } from '@libos/sdk';
import { ACTIVE_TASK_STATUSES, type Notification, type OwnerWatch, type TaskInfo, type TaskStatus } from '../task-info.js';

/**
 * `object_tasks`: one durable row per task. JSON columns hold JSON text (jsonb on PostgreSQL). No arguments,
 * delegations or grant intents.
 */
export interface TaskTable {
  seq: number;
  task_id: string;
  owner_oid: string;
  creator_pid: string;
  runner_pid: string | null;
  tool: string;
  tool_id: string | null;
  status: string;
  result_oid: string | null;
  error: string | null;
  wait: string;
  notification: string;
  owner_watch: string;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** 1 while the notification still has to be sent or retried (`notifyRetry`), else null: the reopen retry's index. */
  notify_retry: number | null;
}

interface TasksDatabase {
  object_tasks: TaskTable;
}

export type TasksDb = Kysely<TasksDatabase>;
export const tasksDb = (store: unknown) => store as TasksDb;

/** The tables this plugin owns. */
export const migrations: readonly Migration[] = [
  {
    name: '0001_object_tasks',
    async up(raw, kit) {
      const db = raw as Kysely<any>;
      const t = kit.types;
      await db.schema
        .createTable('object_tasks')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('task_id', t.id, (c) => c.notNull().unique())
        .addColumn('owner_oid', t.id, (c) => c.notNull())
        .addColumn('creator_pid', t.id, (c) => c.notNull())
        .addColumn('runner_pid', t.id)
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('tool_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('result_oid', t.id)
        .addColumn('error', 'text')
        .addColumn('wait', t.json, (c) => c.notNull())
        .addColumn('notification', t.json, (c) => c.notNull())
        .addColumn('owner_watch', t.json, (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .addColumn('started_at', t.timestamp)
        .addColumn('completed_at', t.timestamp)
        .execute();
      await db.schema.createIndex('object_tasks_status').on('object_tasks').columns(['status', 'owner_oid']).execute();
      await db.schema.createIndex('object_tasks_runner').on('object_tasks').column('runner_pid').execute();
    },
  },
  {
    name: '0002_notify_retry',
    async up(raw, kit) {
      // The reopen retry reads only tasks whose notification is unsent or failed (issue 9: reopen is not O(history)),
      // not every terminal task ever run: a column kept with the notification, and a partial index of those rows.
      const db = raw as Kysely<any>;
      await db.schema.alterTable('object_tasks').addColumn('notify_retry', kit.types.flag).execute();
      for (const r of await db.selectFrom('object_tasks').select(['task_id', 'notification']).execute()) {
        const retry = notifyRetry(JSON.parse(r.notification as string) as Notification);
        if (retry !== null) await db.updateTable('object_tasks').set({ notify_retry: retry }).where('task_id', '=', r.task_id).execute();
      }
      await db.schema
        .createIndex('object_tasks_notify_retry')
        .on('object_tasks')
        .columns(['notify_retry', 'created_at', 'task_id'])
        .where(sql.ref('notify_retry'), 'is not', null)
        .execute();
    },
  },
];

/** The `notify_retry` column of a notification: 1 when it has a recipient and is unsent (`none`) or `failed`. */
export function notifyRetry(n: Notification): 1 | null {
  return n.recipient_pid !== null && (n.status === 'none' || n.status === 'failed') ? 1 : null;
}

function toInfo(r: TaskTable): TaskInfo {
  return {
    task_id: r.task_id,
    owner_oid: r.owner_oid,
    creator_pid: r.creator_pid,
    runner_pid: r.runner_pid,
    tool: r.tool,
    tool_id: r.tool_id,
    status: r.status as TaskStatus,
    result_oid: r.result_oid,
    error: r.error,
    wait: JSON.parse(r.wait) as Record<string, unknown>,
    notification: JSON.parse(r.notification) as Notification,
    owner_watch: JSON.parse(r.owner_watch) as OwnerWatch,
    created_at: r.created_at,
    updated_at: r.updated_at,
    started_at: r.started_at,
    completed_at: r.completed_at,
  };
}

export async function insertTask(db: TasksDb, t: TaskInfo): Promise<void> {
  await db
    .insertInto('object_tasks')
    .values({
      task_id: t.task_id,
      owner_oid: t.owner_oid,
      creator_pid: t.creator_pid,
      runner_pid: t.runner_pid,
      tool: t.tool,
      tool_id: t.tool_id,
      status: t.status,
      result_oid: t.result_oid,
      error: t.error,
      wait: JSON.stringify(t.wait),
      notification: JSON.stringify(t.notification),
      notify_retry: notifyRetry(t.notification),
      owner_watch: JSON.stringify(t.owner_watch),
      created_at: t.created_at,
      updated_at: t.updated_at,
      started_at: t.started_at,
      completed_at: t.completed_at,
    } as never)
    .execute();
}

export async function findTask(db: TasksDb, taskId: string): Promise<TaskInfo | null> {
  const r = await db.selectFrom('object_tasks').selectAll().where('task_id', '=', taskId).executeTakeFirst();
  return r ? toInfo(r) : null;
}

/** Tasks, newest change first (updated_at desc, created_at desc, task_id asc); optionally of one owner / active only. */
export async function listTasks(db: TasksDb, q: { readonly ownerOid?: string; readonly activeOnly?: boolean } = {}): Promise<TaskInfo[]> {
  let sel = db.selectFrom('object_tasks').selectAll();
  if (q.ownerOid !== undefined) sel = sel.where('owner_oid', '=', q.ownerOid);
  if (q.activeOnly) sel = sel.where('status', 'in', [...ACTIVE_TASK_STATUSES]);
  const rows = await sel.orderBy('updated_at', 'desc').orderBy('created_at', 'desc').orderBy('task_id', 'asc').execute();
  return rows.map(toInfo);
}

/** The active tasks created by any of `creatorPids` (in no order). */
export async function activeTasksCreatedBy(db: TasksDb, creatorPids: readonly string[]): Promise<TaskInfo[]> {
  const rows = await db
    .selectFrom('object_tasks')
    .selectAll()
    .where('status', 'in', [...ACTIVE_TASK_STATUSES])
    .where('creator_pid', 'in', [...creatorPids])
    .execute();
  return rows.map(toInfo);
}

/** Active tasks, globally or on one owner. */
export async function countActive(db: TasksDb, ownerOid?: string): Promise<number> {
  let sel = db.selectFrom('object_tasks').where('status', 'in', [...ACTIVE_TASK_STATUSES]);
  if (ownerOid !== undefined) sel = sel.where('owner_oid', '=', ownerOid);
  const { n } = await sel.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * A page of tasks in (created_at, task_id) order after a keyset position, for sweeps. `notifyRetry` keeps only those
 * whose notification waits to be sent or retried, read through their own index (never a scan of the status).
 */
export async function taskPage(
  db: TasksDb,
  statuses: readonly string[],
  after: { readonly createdAt: string; readonly taskId: string } | null,
  limit: number,
  filter: { readonly notifyRetry?: boolean } = {},
): Promise<TaskInfo[]> {
  let sel = db
    .selectFrom('object_tasks')
    .selectAll()
    .where('status', 'in', [...statuses]);
  if (filter.notifyRetry) sel = sel.where('notify_retry', '=', 1);
  if (after)
    sel = sel.where((eb) =>
      eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('task_id', '>', after.taskId)])]),
    );
  const rows = await sel.orderBy('created_at').orderBy('task_id').limit(limit).execute();
  return rows.map(toInfo);
}

/** The fields a transition may change. */
export type TaskPatch = Partial<
  Pick<TaskInfo, 'status' | 'runner_pid' | 'result_oid' | 'error' | 'wait' | 'notification' | 'owner_watch' | 'started_at' | 'completed_at'>
>;

/**
 * Applies a patch (bumping `updated_at`) under a compare-and-set on the current status: only while the status is
 * one of `from`. Returns the new record, or null when the task was no longer in one of them (the first writer wins).
 */
export async function updateTask(
  db: TasksDb,
  taskId: string,
  from: readonly string[],
  patch: TaskPatch,
  nowIso: string,
): Promise<TaskInfo | null> {
  const set: Record<string, unknown> = { updated_at: nowIso };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    set[k] = k === 'wait' || k === 'notification' || k === 'owner_watch' ? JSON.stringify(v) : v;
  }
  if (patch.notification !== undefined) set.notify_retry = notifyRetry(patch.notification);
  const r = await db
    .updateTable('object_tasks')
    .set(set as never)
    .where('task_id', '=', taskId)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) return null;
  return findTask(db, taskId);
}
