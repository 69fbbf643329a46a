import { LibosError, type Decision, type ToolContext } from '@libos/sdk';
import type { TaskInfo } from '../task-info.js';
import { findTask, tasksDb } from './task-store.js';
import { resources } from '@libos/sdk';

/** The task, or `task_not_found` naming the id. */
export async function requireTask(ctx: ToolContext, taskId: string): Promise<TaskInfo> {
  const t = await findTask(tasksDb(ctx.store), taskId);
  if (!t)
    throw new LibosError('task_not_found', `task_id: no object task ${JSON.stringify(taskId)}`, {
      details: { field: 'task_id', task_id: taskId },
    });
  return t;
}

/**
 * Viewing a task (get, wait): its creator always; anyone else needs `read` on the owner Object, and a finite grant
 * pays one use per call (`object_denied` otherwise).
 */
export async function requireView(ctx: ToolContext, t: TaskInfo, opts: { readonly consume: boolean }): Promise<void> {
  if (t.creator_pid === ctx.pid) return;
  const d = await ctx.authority.check(resources.object(t.owner_oid), 'read');
  if (!d.allowed) {
    throw new LibosError(
      'object_denied',
      `task_id: ${ctx.pid} did not create ${t.task_id} and lacks read on its owner object:${t.owner_oid}`,
      { details: { field: 'task_id', task_id: t.task_id, missing_right: 'read' } },
    );
  }
  if (opts.consume) await ctx.authority.consume(d);
}

/** Whether the caller may see the task in a list (no use spent): the decision behind it, or null for its creator. */
export async function viewDecision(
  ctx: ToolContext,
  t: TaskInfo,
): Promise<{ readonly visible: boolean; readonly decision: Decision | null }> {
  if (t.creator_pid === ctx.pid) return { visible: true, decision: null };
  const d = await ctx.authority.check(resources.object(t.owner_oid), 'read');
  return { visible: d.allowed, decision: d.allowed ? d : null };
}

/**
 * Managing a task (cancel, watch): its creator always; anyone else needs `write` on the owner Object. Returns the
 * decision to spend (null for the creator), or throws `object_denied`.
 */
export async function requireManage(ctx: ToolContext, t: TaskInfo): Promise<Decision | null> {
  if (t.creator_pid === ctx.pid) return null;
  const d = await ctx.authority.check(resources.object(t.owner_oid), 'write');
  if (!d.allowed) {
    throw new LibosError(
      'object_denied',
      `task_id: ${ctx.pid} did not create ${t.task_id} and lacks write on its owner object:${t.owner_oid}`,
      { details: { field: 'task_id', task_id: t.task_id, missing_right: 'write' } },
    );
  }
  return d;
}
