import { LibosError, preparedQuery } from '@libos/sdk';
import type { ProcessInfo, ProcessStatus } from './process-record.js';
import { assertStateShape, type Outcome, type WaitState } from './process-state.js';
import { getProcess, rememberProcess } from './process-store.js';
import { waitColumns } from './wait-columns.js';
import type { KernelStore } from '../store/kernel-database.js';

/** The revision CAS of a transition, compiled once per store (every quantum makes a few). */
const SET_STATE = preparedQuery(
  10,
  (db: KernelStore, [status, waitState, waitKind, waitDeadline, outcome, generation, revision, updatedAt, pid, revisionWas]) =>
    db
      .updateTable('processes')
      .set({
        status: status as ProcessStatus,
        wait_state: waitState!,
        wait_kind: waitKind!,
        wait_deadline: waitDeadline!,
        outcome: outcome!,
        state_generation: generation as unknown as number,
        revision: revision as unknown as number,
        updated_at: updatedAt!,
      })
      .where('pid', '=', pid!)
      .where('revision', '=', revisionWas as unknown as number),
);

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
  const { wait_kind, wait_deadline } = waitColumns(wait);
  const r = await db.executeQuery(
    SET_STATE(db, [
      spec.to,
      wait ? JSON.stringify(wait) : null,
      wait_kind,
      wait_deadline,
      outcome ? JSON.stringify(outcome) : null,
      p.stateGeneration + 1,
      p.revision + 1,
      nowIso,
      pid,
      p.revision,
    ]),
  );
  if (Number(r.numAffectedRows ?? 0n) !== 1)
    throw new LibosError('conflict', `process ${pid} changed concurrently (revision ${p.revision}); retry`);
  // The CAS matched the row read as `p`, so the row is now `p` with the columns just set: no need to read it back.
  // A wait or an outcome is read back, though: PostgreSQL keeps JSON as jsonb, which orders keys its own way.
  if (wait !== null || outcome !== null) return getProcess(db, pid);
  const next = { ...p, status: spec.to, waitState: null, outcome: null, updatedAt: nowIso };
  return rememberProcess(db, { ...next, stateGeneration: p.stateGeneration + 1, revision: p.revision + 1 });
}
