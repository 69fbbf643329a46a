import { readThrough } from '../store/memo-of.js';
import { LibosError, newId, preparedQuery, type SavedCallWait } from '@libos/sdk';
import type { Selectable } from 'kysely';
import type { KernelStore, PendingActionsTable } from '../store/kernel-database.js';

/**
 * Saved waiting calls. A process holds at most one (the table's key is the pid), and a saved call is never
 * overwritten: it leaves only by its own resumption (by exact token) or with its process's end. Once its wait is
 * answered the process is runnable and a host may call its tools before the scheduler resumes the saved call; a
 * call that would wait then is refused with `call_already_waiting` (its transaction rolls back: only its failure is
 * audited) and the saved call keeps its answer until it resumes.
 */

/** A blocked call saved durably: re-dispatched on wake without a new model call. */
export interface PendingAction {
  readonly pid: string;
  readonly resumeToken: string;
  readonly callId: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly wait: SavedCallWait;
  readonly status: 'pending' | 'resuming';
}

const toAction = (r: Selectable<PendingActionsTable>): PendingAction => ({
  pid: r.pid,
  resumeToken: r.resume_token,
  callId: r.call_id,
  tool: r.tool,
  args: JSON.parse(r.args),
  wait: JSON.parse(r.wait),
  status: r.status,
});

/** The pid's saved call, if any; through the store memo (a quantum asks more than once). Shared: do not change it. */
export function findPendingAction(db: KernelStore, pid: string): Promise<PendingAction | null> {
  return readThrough(db, ['pending_actions'], `pending:${pid}`, async () => {
    const r = (await db.executeQuery(PENDING_OF(db, [pid]))).rows[0];
    return r ? Object.freeze(toAction(r)) : null;
  });
}

/** The pid's saved call, and the drop of it at its end: compiled once per store (every quantum and exit asks). */
const PENDING_OF = preparedQuery(1, (db: KernelStore, [pid]) => db.selectFrom('pending_actions').selectAll().where('pid', '=', pid!));
const DROP_PENDING = preparedQuery(1, (db: KernelStore, [pid]) => db.deleteFrom('pending_actions').where('pid', '=', pid!));

/**
 * Saves the pid's one pending action. It never replaces another: while one is saved this throws
 * `call_already_waiting` naming it (a resumed call that waits again completes its own first, by token).
 */
export async function savePendingAction(
  db: KernelStore,
  a: { pid: string; callId: string; tool: string; args: unknown; wait: SavedCallWait },
  nowIso: string,
): Promise<string> {
  const waiting = await findPendingAction(db, a.pid);
  if (waiting) {
    throw new LibosError(
      'call_already_waiting',
      `${a.tool} would wait, but ${a.pid} already has a saved waiting call ${waiting.callId} (${waiting.tool}); ` +
        'it must be resumed first (libos run)',
      { details: { pid: a.pid, tool: a.tool, waiting_call_id: waiting.callId, waiting_tool: waiting.tool } },
    );
  }
  const token = newId('resume');
  await db
    .insertInto('pending_actions')
    .values({
      pid: a.pid,
      resume_token: token,
      call_id: a.callId,
      tool: a.tool,
      args: JSON.stringify(a.args ?? {}),
      wait: JSON.stringify(a.wait),
      status: 'pending',
      created_at: nowIso,
      updated_at: nowIso,
    })
    .execute();
  return token;
}

/** Claims a pending action for resumption by its exact token (pending → resuming). False if it was not pending. */
export async function claimPendingAction(db: KernelStore, pid: string, token: string, nowIso: string): Promise<boolean> {
  const r = await db
    .updateTable('pending_actions')
    .set({ status: 'resuming', updated_at: nowIso })
    .where('pid', '=', pid)
    .where('resume_token', '=', token)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Completes a resumed action (the row goes away in the same transaction as the call's effects). */
export async function completePendingAction(db: KernelStore, pid: string, token: string): Promise<void> {
  const r = await db.deleteFrom('pending_actions').where('pid', '=', pid).where('resume_token', '=', token).executeTakeFirst();
  if (Number(r.numDeletedRows) !== 1) throw new LibosError('conflict', `pending action ${token} of ${pid} is no longer current`);
}

/** Settles a resumed call that failed: removes its saved action by exact token (a no-op once it is gone). */
export async function discardPendingAction(db: KernelStore, pid: string, token: string): Promise<void> {
  await db.deleteFrom('pending_actions').where('pid', '=', pid).where('resume_token', '=', token).execute();
}

/** Drops whatever the pid has saved: only for its end (the terminal transaction), when nothing can resume it. */
export async function dropPendingAction(db: KernelStore, pid: string): Promise<void> {
  await db.executeQuery(DROP_PENDING(db, [pid]));
}
