import type { AuditRecord, RuntimeEvent } from './event-bus.js';
import { flushAppends } from '../store/append-buffer.js';
import type { KernelStore } from '../store/kernel-database.js';

export interface AuditQuery {
  /** Only records whose actor is this pid. */
  readonly pid?: string;
  /** Only records with this action, e.g. `tool.call`. */
  readonly action?: string;
  /** Records after this sequence number. */
  readonly after?: number;
  /** At most this many, oldest first (default 100, at most 10,000). */
  readonly limit?: number;
}

const clampLimit = (n: number | undefined) => Math.max(1, Math.min(10_000, n ?? 100));

export async function queryAudit(db: KernelStore, q: AuditQuery = {}): Promise<AuditRecord[]> {
  await flushAppends(db);
  let sel = db.selectFrom('audit_records').selectAll();
  if (q.pid) sel = sel.where('actor', '=', q.pid);
  if (q.action) sel = sel.where('action', '=', q.action);
  if (q.after !== undefined) sel = sel.where('seq', '>', q.after);
  const rows = await sel.orderBy('seq').limit(clampLimit(q.limit)).execute();
  return rows.map((r) => ({
    seq: Number(r.seq),
    id: r.id,
    ts: r.ts,
    actor: r.actor,
    action: r.action,
    target: r.target,
    decision: r.decision,
    callId: r.call_id,
    details: JSON.parse(r.details),
  }));
}

export interface EventQuery {
  readonly pid?: string;
  readonly type?: string;
  readonly after?: number;
  /** Events up to this sequence number only (a stream replays up to the head it announced, `Runtime.lastEventSeq`). */
  readonly upTo?: number;
  readonly limit?: number;
}

export async function queryEvents(db: KernelStore, q: EventQuery = {}): Promise<RuntimeEvent[]> {
  await flushAppends(db);
  let sel = db.selectFrom('events').selectAll();
  if (q.pid) sel = sel.where('pid', '=', q.pid);
  if (q.type) sel = sel.where('type', '=', q.type);
  if (q.after !== undefined) sel = sel.where('seq', '>', q.after);
  if (q.upTo !== undefined) sel = sel.where('seq', '<=', q.upTo);
  const rows = await sel.orderBy('seq').limit(clampLimit(q.limit)).execute();
  return rows.map((r) => ({ seq: Number(r.seq), id: r.id, ts: r.ts, pid: r.pid, type: r.type, data: JSON.parse(r.data) }));
}
