import { defineTool, z, type Decision } from '@libos/sdk';
import { viewDecision } from '../internal/access.js';
import { taskLifecycle } from '../internal/lifecycle.js';
import type { TasksState } from '../internal/state.js';
import { isActive, taskInfoSchema, type TaskInfo } from '../task-info.js';
import { listTasks, tasksDb } from '../internal/task-store.js';

/** Upper bound of `limit`. */
export const MAX_LIST_LIMIT = 1000;

/**
 * `list_object_tasks` (docs/behaviour/object-tasks.md): filter (owner, include_terminal) → reconcile → keep what the caller created or may
 * read the owner of (checked without spending) → limit → spend one use per distinct finite grant behind the rows
 * returned. Ordered by updated_at desc, created_at desc, task_id asc. There is no cursor.
 */
export function listObjectTasks(state: TasksState) {
  return defineTool({
    name: 'list_object_tasks',
    description:
      'List the object tasks you can see, newest change first; filter by owner_oid and include_terminal (default true); limit 0..1000.',
    input: z.object({
      owner_oid: z.string().min(1).max(128).optional(),
      include_terminal: z.boolean().default(true),
      limit: z.number().int().min(0).max(MAX_LIST_LIMIT).optional().describe('0..1000; omitted = all you can see'),
    }),
    output: z.object({ tasks: z.array(taskInfoSchema) }),
    async run({ owner_oid, include_terminal, limit }, ctx) {
      const life = taskLifecycle(ctx, state);
      const rows = await listTasks(tasksDb(ctx.store), owner_oid !== undefined ? { ownerOid: owner_oid } : {});
      const visible: { task: TaskInfo; decision: Decision | null }[] = [];
      for (const row of rows) {
        const task = await life.reconcile(row);
        if (!include_terminal && !isActive(task.status)) continue;
        const v = await viewDecision(ctx, task);
        if (v.visible) visible.push({ task, decision: v.decision });
      }
      const page = limit === undefined ? visible : visible.slice(0, limit);
      const spent = new Set<string>();
      for (const { decision } of page) {
        if (!decision?.consumeId || spent.has(decision.consumeId)) continue;
        await ctx.authority.consume(decision);
        spent.add(decision.consumeId);
      }
      return { tasks: page.map((v) => v.task) };
    },
  });
}
