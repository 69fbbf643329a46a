import { afterEach, describe, expect, test } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { kernelMigrations } from '../store/kernel-schema.js';
import { migrate } from '../store/migrate.js';
import { openSqliteStore } from '../store/sqlite/open-sqlite.js';
import { earliestTimerDeadline, wakeDueTimers } from './timers.js';
import { transition } from './transition.js';
import { waitColumns } from './wait-columns.js';
import type { ProcessStatus } from './process-record.js';

// Timers are found by their deadline column (processes.wait_deadline, indexed with wait_kind), not by parsing every
// waiting row: only due timers are read and woken, and the earliest deadline is one index step.

const rts: Runtime[] = [];
afterEach(async () => {
  for (const rt of rts.splice(0)) await rt.close();
});

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

let now = T0;

/** Spawns a process (a millisecond after the last one, so spawn order is time order) and parks it in a timer wait. */
async function sleeper(rt: Runtime, deadline: string): Promise<string> {
  now += 1;
  const p = await rt.spawn({ image: 'notes-agent:v0', goal: `sleep until ${deadline}` });
  const at = new Date(now).toISOString();
  const wait = { kind: 'timer' as const, started_at: at, deadline };
  await rt.transaction((scope) => transition(scope.store, p.pid, { from: ['runnable'], to: 'waiting_event', wait }, at));
  return p.pid;
}

describe('timers by deadline', () => {
  test('only due timers wake, in spawn order; the earliest deadline comes from the index; any ISO form is normalised', async () => {
    now = T0;
    const clock = { now: () => new Date(now) };
    const rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()], config: { clock } });
    rts.push(rt);
    const late = await sleeper(rt, '2026-03-01T10:00:09.000Z');
    const a = await sleeper(rt, '2026-03-01T10:00:05Z'); // no milliseconds: stored as 10:00:05.000Z
    const b = await sleeper(rt, '2026-03-01T10:00:02.500Z');
    const other = (await rt.spawn({ image: 'notes-agent:v0', goal: 'runnable, never a timer' })).pid;
    expect(await rt.transaction((scope) => earliestTimerDeadline(scope.store))).toBe('2026-03-01T10:00:02.500Z');
    expect(await rt.transaction((scope) => wakeDueTimers(scope))).toEqual([]);
    now = Date.parse('2026-03-01T10:00:05.000Z');
    expect(await rt.transaction((scope) => wakeDueTimers(scope))).toEqual([a, b]);
    expect((await rt.process(a)).status).toBe('runnable');
    expect((await rt.process(late)).status).toBe('waiting_event');
    expect((await rt.process(other)).status).toBe('runnable');
    const columns = (pid: string) =>
      rt.transaction((scope) =>
        scope.store.selectFrom('processes').select(['wait_kind', 'wait_deadline']).where('pid', '=', pid).executeTakeFirst(),
      );
    expect(await columns(a)).toEqual({ wait_kind: null, wait_deadline: null });
    expect(await columns(late)).toEqual({ wait_kind: 'timer', wait_deadline: '2026-03-01T10:00:09.000Z' });
    expect(await rt.transaction((scope) => earliestTimerDeadline(scope.store))).toBe('2026-03-01T10:00:09.000Z');
  });

  test('waitColumns: the kind of any wait, the deadline only when it parses', () => {
    expect(waitColumns(null)).toEqual({ wait_kind: null, wait_deadline: null });
    expect(waitColumns({ kind: 'child', child_pid: 'pid_1' })).toEqual({ wait_kind: 'child', wait_deadline: null });
    const task = waitColumns({ kind: 'task', task_id: 't', deadline: '2026-03-01T10:00:00+01:00' });
    expect(task).toEqual({ wait_kind: 'task', wait_deadline: '2026-03-01T09:00:00.000Z' });
    expect(waitColumns({ kind: 'timer', deadline: 'soon' })).toEqual({ wait_kind: 'timer', wait_deadline: null });
  });

  test('the migration that adds the columns fills them for processes that were already waiting', async () => {
    const store = openSqliteStore(':memory:');
    try {
      const db = store.db;
      const before = kernelMigrations.findIndex((m) => m.name === '0006_scaling_indexes');
      const at = () => new Date(T0).toISOString();
      await migrate(db, [{ owner: '@libos/kernel', migrations: kernelMigrations.slice(0, before) }], at);
      const row = (pid: string, status: ProcessStatus, wait: unknown) => ({
        pid,
        parent_pid: null,
        image_id: 'base-agent:v0',
        status,
        wait_state: wait === null ? null : JSON.stringify(wait),
        outcome: null,
        state_generation: 1,
        revision: 1,
        goal: 'g',
        goal_oid: null,
        tool_table: '[]',
        loaded_skills: '{}',
        working_directory: '.',
        llm_profile_id: null,
        created_at: 'x',
        updated_at: 'x',
      });
      const timer = { kind: 'timer', started_at: 'x', deadline: '2026-03-01T10:00:05Z' };
      const human = { kind: 'human', request_ids: ['hr_1'] };
      const rows0 = [row('pid_timer', 'waiting_event', timer), row('pid_human', 'waiting_human', human), row('pid_done', 'exited', null)];
      await db.insertInto('processes').values(rows0).execute();
      await migrate(db, [{ owner: '@libos/kernel', migrations: kernelMigrations }], at);
      const rows = await db.selectFrom('processes').select(['pid', 'wait_kind', 'wait_deadline']).orderBy('pid').execute();
      expect(rows).toEqual([
        { pid: 'pid_done', wait_kind: null, wait_deadline: null },
        { pid: 'pid_human', wait_kind: 'human', wait_deadline: null },
        { pid: 'pid_timer', wait_kind: 'timer', wait_deadline: '2026-03-01T10:00:05.000Z' },
      ]);
      expect(await earliestTimerDeadline(db)).toBe('2026-03-01T10:00:05.000Z');
    } finally {
      await store.close();
    }
  });
});
