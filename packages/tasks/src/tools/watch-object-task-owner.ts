import { defineTool, LibosError, z } from '@libos/sdk';
import { requireManage, requireTask } from '../internal/access.js';
import { taskLifecycle } from '../internal/lifecycle.js';
import type { TasksState } from '../internal/state.js';
import { isActive, NOTIFY_KINDS, taskInfoSchema } from '../task-info.js';
import { tasksDb, updateTask } from '../internal/task-store.js';
import { watchChange } from '../internal/validate.js';
import { taskIdInput } from './get-object-task.js';
import { resources } from '@libos/sdk';

/**
 * `watch_object_task_owner`: changes which owner changes an active task's runner is told about. Creator,
 * or owner write (no use spent). Empty events, an omitted channel or kind keep the current values. Terminal tasks
 * refuse; nothing restarts, and no access is granted.
 */
export function watchObjectTaskOwner(state: TasksState) {
  return defineTool({
    name: 'watch_object_task_owner',
    description:
      'Change owner-change notices (updated/linked) for an active object task; channel and kind address its runner. Grants nothing.',
    input: z.object({
      task_id: taskIdInput,
      enabled: z.boolean().default(true),
      watch_events: z.array(z.string().max(32)).max(8).default([]),
      watch_channel: z.string().max(1024).optional(),
      watch_kind: z.enum(NOTIFY_KINDS).optional(),
    }),
    output: z.object({ task: taskInfoSchema }),
    async run({ task_id, enabled, watch_events, watch_channel, watch_kind }, ctx) {
      const t0 = await requireTask(ctx, task_id);
      const t = await taskLifecycle(ctx, state).reconcile(t0);
      await requireManage(ctx, t);
      if (!isActive(t.status))
        throw new LibosError('invalid_state', `task_id: object task ${task_id} is ${t.status}; a terminal task's watch cannot change`, {
          details: { field: 'task_id', status: t.status },
        });
      const owner_watch = watchChange(t.owner_watch, { enabled, watch_events, watch_channel, watch_kind });
      const updated = await updateTask(tasksDb(ctx.store), task_id, [t.status], { owner_watch }, ctx.clock.now().toISOString());
      if (!updated)
        throw new LibosError('conflict', `task_id: object task ${task_id} changed concurrently; read it again`, {
          details: { field: 'task_id' },
        });
      await ctx.audit.record({
        action: 'object_task.watch',
        target: resources.objectTask(task_id),
        decision: owner_watch.enabled ? 'enabled' : 'disabled',
        details: { owner_watch },
      });
      return { task: updated };
    },
  });
}
