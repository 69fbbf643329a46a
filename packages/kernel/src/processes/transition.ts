import { LibosError } from '@libos/sdk';
import type { ProcessInfo, ProcessStatus } from './process-record.js';
import { assertStateShape, type Outcome, type WaitState } from './process-state.js';
import { getProcess } from './process-store.js';
import { waitColumns } from './wait-columns.js';
import type { KernelStore } from '../store/kernel-database.js';

export interface TransitionSpec {
  /** The statuses the process must be in (omitted = unchecked; [] matches nothing). */
  readonly from?: readonly ProcessStatus[];
  readonly to: ProcessStatus;
  readonly wait?: WaitState | null;
  readonly outcome?: Outcome | null;
}

/**
 * Moves a process to a new status under a revision compare-and-swap, with stateGeneration + 1 (never caller-set).
 * The typed state shape is enforced here, the one write boundary.
 */
export async function transition(db: KernelStore, pid: string, spec: TransitionSpec, nowIso: string): Promise<ProcessInfo> {
  const p = await getProcess(db, pid);
  if (spec.from && !spec.from.includes(p.status)) {
    throw new LibosError(
      'invalid_state',
      `process ${pid} is ${p.status}; expected ${spec.from.length ? spec.from.join(' or ') : 'nothing'} to become ${spec.to}`,
      {
        details: { pid, status: p.status, expected: spec.from, to: spec.to },
      },
    );
  }
  const wait = spec.wait ?? null;
  const outcome = spec.outcome ?? null;
  assertStateShape(spec.to, wait, outcome);
  const r = await db
    .updateTable('processes')
    .set({
      status: spec.to,
      wait_state: wait ? JSON.stringify(wait) : null,
      ...waitColumns(wait),
      outcome: outcome ? JSON.stringify(outcome) : null,
      state_generation: p.stateGeneration + 1,
      revision: p.revision + 1,
      updated_at: nowIso,
    })
    .where('pid', '=', pid)
    .where('revision', '=', p.revision)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1)
    throw new LibosError('conflict', `process ${pid} changed concurrently (revision ${p.revision}); retry`);
  return getProcess(db, pid);
}
