import { LibosError, newId, preparedQuery, type HumanRequest, type HumanRequestKind, type HumanRequestStatus } from '@libos/sdk';
import type { Selectable } from 'kysely';
import type { HumanRequestsTable, KernelStore } from '../store/kernel-database.js';

const toRequest = (r: Selectable<HumanRequestsTable>): HumanRequest => ({
  id: r.id,
  pid: r.pid,
  kind: r.kind,
  prompt: r.prompt,
  status: r.status,
  details: JSON.parse(r.details),
  response: r.response ? JSON.parse(r.response) : null,
  createdAt: r.created_at,
  answeredAt: r.answered_at,
});

/** Upper bound on a human request's prompt text. */
export const MAX_HUMAN_PROMPT_CHARS = 8_000;

/** Creates a pending request in the durable human queue. */
export async function createHumanRequest(
  db: KernelStore,
  pid: string,
  req: { kind: HumanRequestKind; prompt: string; details?: Readonly<Record<string, unknown>> },
  nowIso: string,
): Promise<HumanRequest> {
  if (req.prompt.trim() === '') throw new LibosError('invalid_arguments', 'prompt: must not be blank');
  if (req.prompt.length > MAX_HUMAN_PROMPT_CHARS)
    throw new LibosError('invalid_arguments', `prompt: must be at most ${MAX_HUMAN_PROMPT_CHARS} characters (got ${req.prompt.length})`);
  const id = newId('hreq');
  await db
    .insertInto('human_requests')
    .values({
      id,
      pid,
      kind: req.kind,
      prompt: req.prompt,
      details: JSON.stringify(req.details ?? {}),
      status: 'pending',
      response: null,
      created_at: nowIso,
      answered_at: null,
    })
    .execute();
  return (await getHumanRequest(db, id))!;
}

export async function getHumanRequest(db: KernelStore, id: string): Promise<HumanRequest | null> {
  const r = await db.selectFrom('human_requests').selectAll().where('id', '=', id).executeTakeFirst();
  return r ? toRequest(r) : null;
}

export async function listHumanRequests(db: KernelStore, q: { status?: HumanRequestStatus; pid?: string } = {}): Promise<HumanRequest[]> {
  let sel = db.selectFrom('human_requests').selectAll();
  if (q.status) sel = sel.where('status', '=', q.status);
  if (q.pid) sel = sel.where('pid', '=', q.pid);
  return (await sel.orderBy('seq').execute()).map(toRequest);
}

/** Settles a pending request (compare-and-swap on `pending`: of two concurrent answers exactly one commits). */
export async function settleHumanRequest(
  db: KernelStore,
  id: string,
  status: Exclude<HumanRequestStatus, 'pending'>,
  response: Record<string, unknown> | null,
  nowIso: string,
): Promise<HumanRequest> {
  const r = await db
    .updateTable('human_requests')
    .set({ status, response: response ? JSON.stringify(response) : null, answered_at: nowIso })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) {
    const cur = await getHumanRequest(db, id);
    if (!cur) throw new LibosError('human_request_not_found', `human request ${id} does not exist`, { details: { id } });
    throw new LibosError(
      'human_request_not_pending',
      `human request ${id} is already ${cur.status}; only a pending request can be answered`,
      { details: { id, status: cur.status } },
    );
  }
  return (await getHumanRequest(db, id))!;
}

/** A process's pending request ids, compiled once per store (every process's end asks). */
const PENDING_REQUESTS_OF = preparedQuery(1, (db: KernelStore, [pid]) =>
  db.selectFrom('human_requests').select('id').where('pid', '=', pid!).where('status', '=', 'pending'),
);

/** Cancels every pending request of a process (it ended). Returns the ids cancelled. */
export async function cancelHumanRequestsOf(db: KernelStore, pid: string, nowIso: string): Promise<string[]> {
  const ids = (await db.executeQuery(PENDING_REQUESTS_OF(db, [pid]))).rows.map((r) => r.id);
  if (ids.length) await db.updateTable('human_requests').set({ status: 'cancelled', answered_at: nowIso }).where('id', 'in', ids).execute();
  return ids;
}
