import { defineTool, z } from '@libos/sdk';
import { requireManage, requireTask } from '../internal/access.js';
import { taskLifecycle } from '../internal/lifecycle.js';
import type { TasksState } from '../internal/state.js';
import { isActive, taskInfoSchema } from '../task-info.js';
import { taskIdInput } from './get-object-task.js';

/**
 * `cancel_object_task` (docs/behaviour/object-tasks.md): creator, or owner write. A terminal task comes back unchanged (no message,
 * no use spent). Otherwise the use is spent, the task becomes `cancelled` (error = reason), its runner is killed,
 * waiters wake and the recipient is told. Nothing rolls back. (A runner's call runs inside one store transaction,
 * so a cancel never lands in the middle of it: there is no unsafe-cancel window to refuse.)
 */
export function cancelObjectTask(state: TasksState) {
  return defineTool({
    name: 'cancel_object_task',
    description: 'Cancel an object task (optional reason). A terminal task is returned unchanged; nothing it already did is undone.',
    input: z.object({ task_id: taskIdInput, reason: z.string().min(1).max(2000).optional() }),
    output: z.object({ task: taskInfoSchema }),
    async run({ task_id, reason }, ctx) {
      const life = taskLifecycle(ctx, state);
      const t = await life.reconcile(await requireTask(ctx, task_id));
      const decision = await requireManage(ctx, t);
      if (!isActive(t.status)) return { task: t };
      if (decision) await ctx.authority.consume(decision);
      return { task: await life.cancel(t, reason) };
    },
  });
}
