import {
  LibosError,
  SERVICE_NAMES,
  type ObjectsService,
  type ServiceScope,
  type StateItem,
  type StatePart,
  type StateRestoreContext,
  type Subtree,
  type SubtreeStateContributor,
} from '@libos/sdk';
import { ACTIVE_TASK_STATUSES, type TaskInfo } from '../task-info.js';
import { tasksDb, updateTask, type TaskTable } from './task-store.js';
import { resources } from '@libos/sdk';

/**
 * ObjectTasks' share of checkpoints (key `tasks`): the task records the subtree created or runs. A task's arguments
 * never were durable, so nothing is forked and a restore re-runs nothing; a task is scoped when its creator or runner
 * is in the subtree, or its owner Object belongs to the subtree.
 *
 * Restore refuses while a scoped task is active, naming the task ids (its runner would settle over the restored
 * state); a scoped terminal task that finished after the capture becomes `superseded_by_restore` (runner and result
 * cleared, the previous values kept in `wait`), and its effects outside the store stay. A result made unavailable by
 * a reopen comes back (`succeeded` again) when the restore brings its Object back.
 */
interface TasksPart {
  readonly version: 1;
  readonly tasks: readonly TaskTable[];
}

const partOf = (part: StatePart): TasksPart => {
  const d = part.data as TasksPart | undefined;
  if (d?.version !== 1 || !Array.isArray(d.tasks))
    throw new LibosError('internal_error', 'tasks: the checkpoint part is not a version 1 ObjectTasks part');
  return d;
};

async function scopedTasks(
  scope: ServiceScope,
  pids: readonly string[],
  opts: { readonly activeOnly?: boolean } = {},
): Promise<TaskTable[]> {
  const db = tasksDb(scope.store);
  const set = new Set(pids);
  const out = new Map<string, TaskTable>();
  for (let i = 0; i < pids.length; i += 400) {
    const c = pids.slice(i, i + 400);
    let sel = db
      .selectFrom('object_tasks')
      .selectAll()
      .where((eb) => eb.or([eb('creator_pid', 'in', c), eb('runner_pid', 'in', c)]));
    if (opts.activeOnly) sel = sel.where('status', 'in', [...ACTIVE_TASK_STATUSES]);
    for (const r of await sel.execute()) out.set(r.task_id, r);
  }
  // A task of someone else on an Object the subtree owns is in scope too (checked for the few active ones, and for
  // every terminal one through its owner's current owner).
  let others = db.selectFrom('object_tasks').selectAll();
  if (opts.activeOnly) others = others.where('status', 'in', [...ACTIVE_TASK_STATUSES]);
  const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
  const owners = new Map<string, boolean>();
  for (const r of await others.execute()) {
    if (out.has(r.task_id)) continue;
    if (!owners.has(r.owner_oid)) {
      const d = await objects.describe(r.owner_oid);
      owners.set(r.owner_oid, d !== null && set.has(d.ownerId));
    }
    if (owners.get(r.owner_oid)) out.set(r.task_id, r);
  }
  return [...out.values()].sort((a, b) => Number(a.seq) - Number(b.seq));
}

export function tasksState(): SubtreeStateContributor {
  return {
    key: 'tasks',

    async capture(scope, subtree: Subtree): Promise<StatePart> {
      return { data: { version: 1, tasks: await scopedTasks(scope, subtree.pids) } satisfies TasksPart };
    },

    describe(part): readonly StateItem[] {
      return partOf(part).tasks.map((t) => ({
        kind: 'task',
        id: t.task_id,
        state: { status: t.status, owner_oid: t.owner_oid, creator_pid: t.creator_pid, tool: t.tool, result_oid: t.result_oid },
      }));
    },

    async checkRestore(scope, subtree) {
      const active = (await scopedTasks(scope, subtree.pids, { activeOnly: true })).map((t) => t.task_id).sort();
      if (active.length > 0) {
        throw new LibosError(
          'invalid_state',
          `restore: object tasks ${active.join(', ')} are still active in this subtree; wait for them or cancel them, then restore`,
          {
            details: { task_ids: active },
          },
        );
      }
    },

    async restore(scope, subtree, part, ctx: StateRestoreContext) {
      const db = tasksDb(scope.store);
      const now = scope.clock.now().toISOString();
      const superseded: string[] = [];
      const revived: string[] = [];
      const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
      const captured = new Map(partOf(part).tasks.map((t) => [t.task_id, t]));
      // "Finished after the capture" is read off the capture itself, not clocks: a task the capture did not hold, or
      // held active, finished since; one it held terminal had finished before.
      const finishedBefore = (t: TaskTable) =>
        ACTIVE_TASK_STATUSES.every((s) => s !== captured.get(t.task_id)?.status) && captured.has(t.task_id);
      for (const t of await scopedTasks(scope, subtree.pids)) {
        const wait = JSON.parse(t.wait) as Record<string, unknown>;
        if (t.status === 'result_unavailable_after_reopen' && finishedBefore(t) && typeof wait.previous_result_oid === 'string') {
          // A reopen lost the result; the restore brought its Object back.
          if ((await objects.describe(wait.previous_result_oid))?.payloadAvailable) {
            const back: TaskInfo['wait'] = { ...wait, result_restored_by: ctx.checkpointId, result_restored_at: now };
            if (
              await updateTask(
                db,
                t.task_id,
                ['result_unavailable_after_reopen'],
                {
                  status: 'succeeded',
                  result_oid: wait.previous_result_oid,
                  error: (wait.previous_error as string | null) ?? null,
                  wait: back,
                },
                now,
              )
            )
              revived.push(t.task_id);
          }
          continue;
        }
        if (t.status === 'superseded_by_restore' || finishedBefore(t)) continue;
        const next = {
          ...wait,
          superseded_by_restore: ctx.checkpointId,
          superseded_at: now,
          previous_status: t.status,
          previous_runner_pid: t.runner_pid,
          previous_result_oid: t.result_oid,
          previous_error: t.error,
        };
        const moved = await updateTask(
          db,
          t.task_id,
          [t.status],
          {
            status: 'superseded_by_restore',
            runner_pid: null,
            result_oid: null,
            error: `superseded by checkpoint restore ${ctx.checkpointId}`,
            wait: next,
          },
          now,
        );
        if (!moved) continue;
        superseded.push(t.task_id);
        await scope.events.emit('object_task_superseded', {
          pid: t.creator_pid,
          task_id: t.task_id,
          checkpoint_id: ctx.checkpointId,
          previous_status: t.status,
          captured: captured.has(t.task_id),
        });
      }
      if (superseded.length || revived.length) {
        await scope.audit.record({
          action: 'object_task.checkpoint_restore',
          target: resources.process(subtree.rootPid),
          decision: 'superseded_by_restore',
          details: { checkpoint_id: ctx.checkpointId, superseded, revived },
        });
      }
      ctx.report({ superseded_tasks: superseded, revived_tasks: revived });
    },
  };
}
