import { defineTool, z } from '@libos/sdk';
import { requireTask, requireView } from '../internal/access.js';
import { taskLifecycle } from '../internal/lifecycle.js';
import type { TasksState } from '../internal/state.js';
import { taskInfoSchema } from '../task-info.js';
import { taskIdInput } from './get-object-task.js';

/**
 * `wait_object_task` (docs/behaviour/object-tasks.md). Returns at once when the task is terminal or waits on something (waiting_*), and
 * for `timeout_s: 0`. Otherwise (queued/running) the caller parks in a typed `{kind:'task', task_id, deadline?}`
 * wait instead of polling inside its quantum, so every other process, the task's runner included, keeps running:
 * the task's next change wakes it, and an idle scheduler wakes it at the deadline. The saved call then re-runs
 * and returns what it finds; a timeout returns the queued/running snapshot, never a failure or a cancel.
 * Visibility is checked (and a finite read use spent) once, on the first run.
 */
export function waitObjectTask(state: TasksState) {
  return defineTool({
    name: 'wait_object_task',
    description:
      'Wait for an object task to settle or to need something. timeout_s 0..60 (0 = look once, omitted = no ' +
      'deadline); a timeout returns queued/running.',
    input: z.object({
      task_id: taskIdInput,
      timeout_s: z
        .number()
        .min(0)
        .max(state.limits.maxWaitSeconds)
        .optional()
        .describe(`seconds, 0..${state.limits.maxWaitSeconds}; prefer a finite bound`),
    }),
    output: z.object({ task: taskInfoSchema }),
    async run({ task_id, timeout_s }, ctx) {
      const t = await requireTask(ctx, task_id);
      if (!ctx.resumed) await requireView(ctx, t, { consume: true });
      const task = await taskLifecycle(ctx, state).reconcile(t);
      if (task.status !== 'queued' && task.status !== 'running') return { task };
      if (ctx.resumed || timeout_s === 0) return { task };
      const deadline =
        timeout_s === undefined ? undefined : new Date(ctx.clock.now().getTime() + Math.round(timeout_s * 1000)).toISOString();
      return ctx.wait({ kind: 'task', task_id, ...(deadline !== undefined ? { deadline } : {}) });
    },
  });
}
