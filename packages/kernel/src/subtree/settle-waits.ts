import type { MessageFilters } from '@libos/sdk';
import { getHumanRequest } from '../human/human-queue.js';
import { queryMessages } from '../mailbox/messages.js';
import { TERMINAL_PROCESS_STATUSES } from '../processes/process-record.js';
import { findProcess } from '../processes/process-store.js';
import { wakeIfWaiting } from '../processes/wake.js';
import type { KernelScope } from '../store/kernel-scope.js';

/**
 * After a restore, a restored wait may already be answered by what happened since (the history of human requests,
 * children and tasks is never rolled back): such a process is woken so its saved call re-runs and reports what it
 * finds, instead of waiting for an answer that came before. Returns the pids woken.
 */
export async function settleRestoredWaits(scope: KernelScope, pids: readonly string[]): Promise<string[]> {
  const woken: string[] = [];
  for (const pid of pids) {
    const p = await findProcess(scope.store, pid);
    const w = p?.waitState as Record<string, unknown> | null | undefined;
    if (!p || !w) continue;
    let answered = false;
    if (w.kind === 'human') {
      answered = true;
      for (const id of w.request_ids as string[]) if ((await getHumanRequest(scope.store, id))?.status === 'pending') answered = false;
    } else if (w.kind === 'child') {
      const child = await findProcess(scope.store, w.child_pid as string);
      answered = !child || TERMINAL_PROCESS_STATUSES.has(child.status);
    } else if (w.kind === 'task') answered = true;
    else if (w.kind === 'message') {
      answered =
        (await queryMessages(scope.store, pid, w.filters as MessageFilters, { includeAcked: false, limit: 1 })).messages.length > 0;
    }
    if (answered && (await wakeIfWaiting(scope, pid, () => true, 'restored wait already answered'))) woken.push(pid);
  }
  return woken;
}
