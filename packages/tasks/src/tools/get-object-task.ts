import { defineTool, z } from '@libos/sdk';
import { requireTask, requireView } from '../internal/access.js';
import { taskLifecycle } from '../internal/lifecycle.js';
import type { TasksState } from '../internal/state.js';
import { taskInfoSchema } from '../task-info.js';

export const taskIdInput = z.string().min(1).max(128).describe('the task_id start_object_task returned');

/**
 * `get_object_task`: the full state of one task. Its creator may always look; anyone else needs read on
 * the owner Object (a finite grant pays one use). Settles a dead runner's task and retries a pending notification.
 */
export function getObjectTask(state: TasksState) {
  return defineTool({
    name: 'get_object_task',
    description:
      'Full state of one object task by task_id (status, runner, result_oid, error, wait, notification). May settle housekeeping.',
    input: z.object({ task_id: taskIdInput }),
    output: z.object({ task: taskInfoSchema }),
    async run({ task_id }, ctx) {
      const t = await requireTask(ctx, task_id);
      await requireView(ctx, t, { consume: true });
      return { task: await taskLifecycle(ctx, state).reconcile(t) };
    },
  });
}
