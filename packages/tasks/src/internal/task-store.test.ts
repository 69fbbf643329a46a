import Database from 'better-sqlite3';
import { sqliteMigrationKit } from '@libos/sdk';
import { CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TaskInfo } from '../task-info.js';
import { countActive, findTask, insertTask, listTasks, migrations, taskPage, tasksDb, updateTask, type TasksDb } from './task-store.js';

let raw: Kysely<any>;
let db: TasksDb;
/** Every SQL text the store ran, in order. */
let queries: string[];
beforeEach(async () => {
  queries = [];
  raw = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(':memory:') }), log: (e) => void queries.push(e.query.sql) });
  for (const m of migrations) await m.up(raw, sqliteMigrationKit(raw));
  db = tasksDb(raw);
});
afterEach(async () => raw.destroy());

const task = (n: number, over: Partial<TaskInfo> = {}): TaskInfo => ({
  task_id: `task_${String(n).padStart(16, '0')}`,
  owner_oid: 'obj_a',
  creator_pid: 'pid_1',
  runner_pid: `pid_r${n}`,
  tool: 'tt_echo',
  tool_id: null,
  status: 'queued',
  result_oid: null,
  error: null,
  wait: {},
  notification: {
    recipient_pid: 'pid_1',
    kind: 'normal',
    channel: 'object-task',
    subject: null,
    message_id: null,
    status: 'none',
    error: null,
  },
  owner_watch: { enabled: false, events: ['updated', 'linked'], kind: 'normal', channel: 'object-task-owner' },
  created_at: `2026-01-01T00:00:0${n}.000Z`,
  updated_at: `2026-01-01T00:00:0${n}.000Z`,
  started_at: null,
  completed_at: null,
  ...over,
});

describe('the object_tasks table', () => {
  it('round-trips a task and counts active ones globally and per owner', async () => {
    await insertTask(db, task(1));
    await insertTask(db, task(2, { owner_oid: 'obj_b' }));
    await insertTask(db, task(3, { status: 'succeeded' }));
    expect(await findTask(db, task(1).task_id)).toEqual(task(1));
    expect(await findTask(db, 'task_missing')).toBeNull();
    expect(await countActive(db)).toBe(2);
    expect(await countActive(db, 'obj_a')).toBe(1);
  });

  it('[OT-36] lists newest change first, then newest creation, then task id; filters by owner and activity', async () => {
    await insertTask(db, task(1, { updated_at: '2026-01-01T00:00:09.000Z' }));
    await insertTask(db, task(2));
    await insertTask(db, task(3, { status: 'failed' }));
    expect((await listTasks(db)).map((t) => t.task_id)).toEqual([task(1), task(3), task(2)].map((t) => t.task_id));
    expect((await listTasks(db, { activeOnly: true })).map((t) => t.task_id)).toEqual([task(1), task(2)].map((t) => t.task_id));
    expect(await listTasks(db, { ownerOid: 'obj_none' })).toEqual([]);
  });

  it('updates under a compare-and-set on the status: the first terminal writer wins', async () => {
    await insertTask(db, task(1));
    const won = await updateTask(
      db,
      task(1).task_id,
      ['queued', 'running'],
      { status: 'cancelled', error: 'r', completed_at: 'T' },
      '2026-02-01T00:00:00.000Z',
    );
    expect(won).toMatchObject({ status: 'cancelled', error: 'r', completed_at: 'T', updated_at: '2026-02-01T00:00:00.000Z' });
    expect(await updateTask(db, task(1).task_id, ['queued', 'running'], { status: 'succeeded' }, 'later')).toBeNull();
    expect((await findTask(db, task(1).task_id))!.status).toBe('cancelled');
    const notified = await updateTask(
      db,
      task(1).task_id,
      ['cancelled'],
      { notification: { ...task(1).notification, status: 'delivered', message_id: 'msg_1' } },
      'later',
    );
    expect(notified!.notification).toMatchObject({ status: 'delivered', message_id: 'msg_1' });
  });

  it('pages by (created_at, task_id) for the reopen sweep', async () => {
    for (let n = 1; n <= 5; n++) await insertTask(db, task(n));
    const first = await taskPage(db, ['queued'], null, 2);
    const second = await taskPage(db, ['queued'], { createdAt: first[1]!.created_at, taskId: first[1]!.task_id }, 2);
    const third = await taskPage(db, ['queued'], { createdAt: second[1]!.created_at, taskId: second[1]!.task_id }, 2);
    expect([...first, ...second, ...third].map((t) => t.task_id)).toEqual([1, 2, 3, 4, 5].map((n) => task(n).task_id));
  });

  it('the reopen retry page holds only tasks whose notification is unsent or failed, read through their own index', async () => {
    const note = task(1).notification;
    await insertTask(db, task(1, { status: 'succeeded' })); // unsent: retried
    await insertTask(db, task(2, { status: 'failed', notification: { ...note, status: 'delivered', message_id: 'msg_2' } }));
    await insertTask(db, task(3, { status: 'cancelled', notification: { ...note, recipient_pid: null } }));
    await insertTask(db, task(4, { status: 'succeeded', notification: { ...note, status: 'failed', error: 'x' } })); // failed: retried
    const retried = async () =>
      (await taskPage(db, ['succeeded', 'failed', 'cancelled'], null, 10, { notifyRetry: true })).map((t) => t.task_id);
    expect(await retried()).toEqual([task(1).task_id, task(4).task_id]);
    await updateTask(db, task(1).task_id, ['succeeded'], { notification: { ...note, status: 'delivered', message_id: 'msg_1' } }, 'later');
    await updateTask(db, task(2).task_id, ['failed'], { error: 'only the error changes' }, 'later');
    expect(await retried()).toEqual([task(4).task_id]);
    const page = queries.filter((q) => q.includes('"notify_retry" = ?')).at(-1)!;
    const params = Array.from({ length: (page.match(/\?/g) ?? []).length }, () => null);
    const plan = await raw.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${page}`, params));
    expect(plan.rows.map((r) => r.detail).join('\n')).toMatch(/INDEX object_tasks_notify_retry/);
  });
});
