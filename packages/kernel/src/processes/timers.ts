import type { Kysely } from 'kysely';
import type { TxScope } from '../store/transaction.js';
import type { ProcessInfo } from './process-record.js';
import { wakeIfWaiting } from './wake.js';

type TimerWait = { readonly kind: 'timer'; readonly started_at: string; readonly deadline: string };
const timerWait = (p: Pick<ProcessInfo, 'waitState'>) => (p.waitState?.kind === 'timer' ? (p.waitState as unknown as TimerWait) : null);

/** Processes parked in a timer wait (a `sleep`). */
async function timerWaiters(db: Kysely<any>): Promise<{ pid: string; waitState: Readonly<Record<string, unknown>> }[]> {
  const rows = await db.selectFrom('processes').select(['pid', 'wait_state']).where('status', '=', 'waiting_event').where('wait_state', 'like', '%"kind":"timer"%').execute();
  return rows.map((r) => ({ pid: r.pid as string, waitState: JSON.parse(r.wait_state as string) as Record<string, unknown> })).filter((p) => timerWait(p) !== null);
}

/** The earliest timer deadline, or null. */
export async function earliestTimerDeadline(db: Kysely<any>): Promise<string | null> {
  let min: string | null = null;
  for (const p of await timerWaiters(db)) {
    const d = timerWait(p)!.deadline;
    if (min === null || Date.parse(d) < Date.parse(min)) min = d;
  }
  return min;
}

/**
 * Wakes every timer whose deadline is at or before now (the scheduler, every round): a sleeping process becomes
 * runnable only when its delay has passed, whatever else happens meanwhile.
 */
export async function wakeDueTimers(scope: TxScope): Promise<string[]> {
  const now = scope.clock.now().getTime();
  const woken: string[] = [];
  for (const p of await timerWaiters(scope.store)) {
    const d = timerWait(p)!.deadline;
    if (Date.parse(d) > now) continue;
    if (await wakeIfWaiting(scope, p.pid, (q) => timerWait(q)?.deadline === d, `timer ${d} elapsed`)) woken.push(p.pid);
  }
  return woken;
}
