import { SERVICE_NAMES, type ObjectsService, type RunnerService, type ServiceScope } from '@libos/sdk';
import { auditTaskSweep } from './audit-summary.js';
import { taskLifecycle } from './lifecycle.js';
import type { TasksState } from './state.js';
import { ACTIVE_TASK_STATUSES, type TaskInfo } from '../task-info.js';
import { activeTasksCreatedBy, taskPage, tasksDb, updateTask } from './task-store.js';

/** An active task whose runner is gone (`why`: what ended it) becomes `abandoned` and its runner child is ended. */
async function abandon(scope: ServiceScope, state: TasksState, t: TaskInfo, why: string): Promise<boolean> {
  const done = await taskLifecycle(scope, state).finish(t, 'abandoned', { error: `${why} before object task completed` });
  if (done.status !== 'abandoned') return false;
  if (t.runner_pid)
    await scope.service<RunnerService>(SERVICE_NAMES.runners).end(t.runner_pid, {
      kind: 'killed',
      code: 'runtime_reopened',
      reason: `${why} before object task ${t.task_id} completed`,
    });
  return true;
}

/**
 * A host took over the process tree of `pids` from a host that stopped (`PluginHooks.recoverTree`): the tree's active
 * tasks had their runners on that host, so they are abandoned as a reopen abandons every active task.
 */
export async function sweepTasksOfTree(scope: ServiceScope, state: TasksState, pids: readonly string[]): Promise<string[]> {
  const abandoned: string[] = [];
  const db = tasksDb(scope.store);
  for (let i = 0; i < pids.length; i += RECOVERY_PAGE) {
    // Each task read once, whole: abandon is a compare-and-set on "still active", and runner_pid changes only when a
    // task leaves the active statuses, so a row read at the page's start is as good as one read again.
    for (const t of await activeTasksCreatedBy(db, pids.slice(i, i + RECOVERY_PAGE))) {
      if (await abandon(scope, state, t, 'its host stopped')) abandoned.push(t.task_id);
    }
  }
  await auditTaskSweep(scope, 'object_task.takeover_abandoned', 'abandoned', abandoned);
  return abandoned;
}

/** Tasks handled per page of the reopen sweep. */
export const RECOVERY_PAGE = 500;

export interface ReopenReport {
  readonly abandoned: readonly string[];
  readonly resultUnavailable: readonly string[];
  readonly notified: readonly string[];
}

async function eachTask(
  scope: ServiceScope,
  statuses: readonly string[],
  fn: (t: TaskInfo) => Promise<void>,
  filter: { readonly notifyRetry?: boolean } = {},
): Promise<void> {
  const db = tasksDb(scope.store);
  let after: { createdAt: string; taskId: string } | null = null;
  for (;;) {
    const page = await taskPage(db, statuses, after, RECOVERY_PAGE, filter);
    for (const t of page) await fn(t);
    if (page.length < RECOVERY_PAGE) return;
    const last = page[page.length - 1]!;
    after = { createdAt: last.created_at, taskId: last.task_id };
  }
}

/**
 * The reopen sweep (docs/behaviour/object-tasks.md), run from the plugin's open hook before any work is admitted. Nothing resumes:
 * arguments, delegations and grant intents were live only.
 * 1. every active task becomes `abandoned` ("runtime reopened before object task completed") and its runner is killed;
 * 2. a `succeeded` task whose result Object lost its payload becomes `result_unavailable_after_reopen` (result_oid
 *    null, the previous values kept in `wait`, completed_at kept);
 * 3. terminal notifications left `none`/`failed` are retried.
 * One audit per non-empty step. Idempotent: a second sweep finds nothing to do.
 */
export async function sweepTasksAfterReopen(scope: ServiceScope, state: TasksState): Promise<ReopenReport> {
  const db = tasksDb(scope.store);
  const now = scope.clock.now().toISOString();
  const abandoned: string[] = [];
  await eachTask(scope, ACTIVE_TASK_STATUSES, async (t) => {
    if (await abandon(scope, state, t, 'runtime reopened')) abandoned.push(t.task_id);
  });
  await auditTaskSweep(scope, 'object_task.reopen_abandoned', 'abandoned', abandoned);

  const unavailable: string[] = [];
  const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
  await eachTask(scope, ['succeeded'], async (t) => {
    if (!t.result_oid) return;
    const d = await objects.describe(t.result_oid);
    if (d?.payloadAvailable) return;
    const wait = {
      ...t.wait,
      result_unavailable_after_reopen: true,
      result_unavailable_at: now,
      previous_status: t.status,
      previous_result_oid: t.result_oid,
      previous_error: t.error,
    };
    const moved = await updateTask(
      db,
      t.task_id,
      ['succeeded'],
      {
        status: 'result_unavailable_after_reopen',
        result_oid: null,
        error: `result unavailable after runtime reopen: ${t.result_oid}`,
        wait,
      },
      now,
    );
    if (moved) unavailable.push(t.task_id);
  });
  await auditTaskSweep(scope, 'object_task.reopen_result_unavailable', 'result_unavailable_after_reopen', unavailable);

  const life = taskLifecycle(scope, state);
  const notified: string[] = [];
  // Only tasks whose notification is unsent or failed (the notify_retry index), not every terminal task ever run.
  const retry = { notifyRetry: true };
  await eachTask(
    scope,
    ['succeeded', 'failed', 'cancelled'],
    async (t) => {
      if (t.notification.recipient_pid === null || (t.notification.status !== 'none' && t.notification.status !== 'failed')) return;
      const after = await life.reconcile(t);
      if (after.notification.status !== t.notification.status) notified.push(t.task_id);
    },
    retry,
  );
  await auditTaskSweep(scope, 'object_task.reopen_notifications', 'retried', notified);
  return { abandoned, resultUnavailable: unavailable, notified };
}
