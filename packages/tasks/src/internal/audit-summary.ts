import type { ServiceScope } from '@libos/sdk';

/** Task ids one summary lists; `count` gives how many there were in all. */
const LISTED_TASK_IDS = 100;

/**
 * One audit record summing up a sweep over tasks (reopen, takeover, shutdown): `action` and `decision`, with how many
 * tasks it moved and the first ids. Nothing is recorded when it moved none.
 */
export async function auditTaskSweep(scope: ServiceScope, action: string, decision: string, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  await scope.audit.record({ action, decision, details: { count: taskIds.length, task_ids: taskIds.slice(0, LISTED_TASK_IDS) } });
}
