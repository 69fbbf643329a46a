import type { ProcessInfo } from './process-record.js';
import { findProcess } from './process-store.js';
import { transition } from './transition.js';
import type { KernelScope } from '../store/kernel-scope.js';

/**
 * Wakes `pid` (→ runnable) if it still waits in the given way: a stale or different wait is a no-op, so an old
 * wake can never resume a newer wait. Runs in the caller's transaction; returns whether it woke.
 */
export async function wakeIfWaiting(
  scope: KernelScope,
  pid: string,
  matches: (p: ProcessInfo) => boolean,
  reason: string,
): Promise<boolean> {
  const db = scope.store;
  const p = await findProcess(db, pid);
  if (!p || (p.status !== 'waiting_event' && p.status !== 'waiting_human') || !matches(p)) return false;
  await transition(db, pid, { from: [p.status], to: 'runnable' }, scope.clock.now().toISOString());
  await scope.events.emit('process_woken', { pid, reason, wait: p.waitState });
  return true;
}

/** True when p waits for child `childPid`. */
export const waitsForChild = (childPid: string) => (p: ProcessInfo) => p.waitState?.kind === 'child' && p.waitState.child_pid === childPid;

/** True when p waits on a human wait whose every request is settled. */
export const waitsForHuman = (settled: (id: string) => boolean) => (p: ProcessInfo) =>
  p.waitState?.kind === 'human' && (p.waitState.request_ids as string[]).every(settled);
