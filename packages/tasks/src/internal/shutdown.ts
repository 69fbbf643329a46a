import type { ServiceScope } from '@libos/sdk';
import { auditTaskSweep } from './audit-summary.js';
import { taskLifecycle } from './lifecycle.js';
import type { TasksState } from './state.js';
import { ACTIVE_TASK_STATUSES } from '../task-info.js';
import { listTasks, tasksDb } from './task-store.js';

/**
 * Runtime shutdown (OT-51): every active task is cancelled with `reason` (its runner is killed, its waiters woken, a
 * cancelled-phase notification sent), in the shutdown's transaction. Returns the ids cancelled.
 */
export async function cancelActiveTasks(scope: ServiceScope, state: TasksState, reason: string): Promise<string[]> {
  const life = taskLifecycle(scope, state);
  const cancelled: string[] = [];
  for (const t of await listTasks(tasksDb(scope.store), { activeOnly: true })) {
    const done = await life.cancel(t, reason);
    if (done.status === 'cancelled' && done.error === reason) cancelled.push(t.task_id);
  }
  await auditTaskSweep(scope, 'object_task.shutdown_cancelled', 'cancelled', cancelled);
  return cancelled;
}

/** The owners among `oids` of an active task (`object_pins`): they outlive their owner process's end. */
export async function pinnedOwners(scope: ServiceScope, oids: readonly string[]): Promise<ReadonlySet<string>> {
  const out = new Set<string>();
  for (let i = 0; i < oids.length; i += 400) {
    const rows = await tasksDb(scope.store)
      .selectFrom('object_tasks')
      .select('owner_oid')
      .where('owner_oid', 'in', oids.slice(i, i + 400))
      .where('status', 'in', [...ACTIVE_TASK_STATUSES])
      .execute();
    for (const r of rows) out.add(r.owner_oid);
  }
  return out;
}
