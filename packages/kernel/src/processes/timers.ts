import { preparedQuery } from '@libos/sdk';
import { executeNow } from '../store/direct-queries.js';
import { readThrough } from '../store/memo-of.js';
import type { ProcessInfo } from './process-record.js';
import { waitOfKind } from './process-state.js';
import { wakeIfWaiting } from './wake.js';
import type { NotNull } from 'kysely';
import type { KernelStore } from '../store/kernel-database.js';
import type { KernelScope } from '../store/kernel-scope.js';

const timerWait = (p: Pick<ProcessInfo, 'waitState'>) => waitOfKind(p.waitState, 'timer');

/**
 * The earliest timer deadline, or null. One step of the wait index (`wait_kind`, `wait_deadline`): its cost does not
 * depend on how many processes the store holds or how many others wait.
 */
export function earliestTimerDeadline(db: KernelStore): Promise<string | null> {
  return readThrough(db, ['processes'], 'timers:earliest', () => readEarliestTimerDeadline(db));
}

/** Compiled once per store: the scheduler asks before every round. */
const EARLIEST_TIMER = preparedQuery(0, (db: KernelStore) =>
  db.selectFrom('processes').select('wait_deadline').where('wait_kind', '=', 'timer').orderBy('wait_deadline').limit(1),
);

async function readEarliestTimerDeadline(db: KernelStore): Promise<string | null> {
  const { rows } = await executeNow(db, EARLIEST_TIMER(db, []));
  return rows[0]?.wait_deadline ?? null;
}

/**
 * Wakes every timer whose deadline is at or before now (the scheduler, every round): a sleeping process becomes
 * runnable only when its delay has passed, whatever else happens meanwhile. Reads only the due timers (an index
 * range), woken in spawn order.
 */
export async function wakeDueTimers(scope: KernelScope): Promise<string[]> {
  const now = scope.clock.now();
  const rows = await scope.store
    .selectFrom('processes')
    .select(['pid', 'wait_state'])
    .where('wait_kind', '=', 'timer')
    .where('wait_deadline', '<=', now.toISOString())
    // A timer wait's row always holds its wait (the wait columns mirror wait_state).
    .$narrowType<{ wait_state: NotNull }>()
    .orderBy('created_at')
    .orderBy('pid')
    .execute();
  const woken: string[] = [];
  for (const r of rows) {
    const d = timerWait({ waitState: JSON.parse(r.wait_state) as ProcessInfo['waitState'] })?.deadline;
    if (d === undefined || Date.parse(d) > now.getTime()) continue;
    if (await wakeIfWaiting(scope, r.pid, (q) => timerWait(q)?.deadline === d, `timer ${d} elapsed`)) woken.push(r.pid);
  }
  return woken;
}
