import { LibosError, preparedQuery } from '@libos/sdk';
import { cancelHumanRequestsOf } from '../human/human-queue.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { dropPendingAction } from './pending-actions.js';
import { TERMINAL_PROCESS_STATUSES, type ProcessInfo } from './process-record.js';
import type { Outcome } from './process-state.js';
import { getProcess } from './process-store.js';
import { runnerEnded } from './runners.js';
import { transition } from './transition.js';
import { waitsForChild, wakeIfWaiting } from './wake.js';
import { resources } from '@libos/sdk';
import type { KernelStore } from '../store/kernel-database.js';
import type { KernelScope } from '../store/kernel-scope.js';

const STATUS_OF: Record<Outcome['kind'], 'exited' | 'failed' | 'killed'> = { exited: 'exited', failed: 'failed', killed: 'killed' };

/**
 * The terminal transaction, in the caller's transaction: terminal state and outcome, the pending action dropped,
 * pending human requests cancelled, the budget envelope released to the parent, the `process_exited` event, the
 * `process.exit` audit, a runner's observer told, and the parent's wake if it waits on this child. Ending a
 * terminal process fails.
 */
export async function endProcess(deps: KernelDeps, scope: KernelScope, pid: string, outcome: Outcome): Promise<ProcessInfo> {
  const p = await getProcess(scope.store, pid);
  if (TERMINAL_PROCESS_STATUSES.has(p.status))
    throw new LibosError('invalid_state', `process ${pid} is already ${p.status}; a terminal process cannot end again`, {
      details: { pid, status: p.status },
    });
  const now = scope.clock.now().toISOString();
  const ended = await transition(scope.store, pid, { to: STATUS_OF[outcome.kind], outcome }, now);
  await dropPendingAction(scope.store, pid);
  const cancelled = await cancelHumanRequestsOf(scope.store, pid, now);
  await deps.engine.budgets(scope).closeAccount(pid);
  await scope.events.emit('process_exited', { pid, status: ended.status, outcome, cancelled_human_requests: cancelled });
  await scope.audit.record({
    action: 'process.exit',
    target: resources.process(pid),
    decision: ended.status,
    details: { outcome, cancelled_human_requests: cancelled },
  });
  // A runner's observer (an ObjectTask) learns of its end in this transaction, whatever ended it.
  await runnerEnded(deps, scope, ended);
  if (p.parentPid) await wakeIfWaiting(scope, p.parentPid, waitsForChild(pid), `child ${pid} ${ended.status}`);
  if (outcome.kind !== 'exited') {
    // A killed or failed process takes its live descendants with it: nobody is left to wait for them.
    for (const child of await liveChildren(scope, pid))
      await endProcess(deps, scope, child, { kind: 'killed', code: 'ancestor_ended', reason: `ancestor ${pid} ${ended.status}` });
  }
  return ended;
}

/** The children of a process, compiled once per store (every exit asks). */
const CHILDREN = preparedQuery(1, (db: KernelStore, [pid]) =>
  db.selectFrom('processes').select(['pid', 'status']).where('parent_pid', '=', pid!),
);

/** Direct children of `pid` that are not terminal. */
export async function liveChildren(scope: KernelScope, pid: string): Promise<string[]> {
  const { rows } = await scope.store.executeQuery(CHILDREN(scope.store, [pid]));
  return rows.filter((r) => !TERMINAL_PROCESS_STATUSES.has(r.status)).map((r) => r.pid);
}
