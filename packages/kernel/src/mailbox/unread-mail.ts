import { preparedQuery } from '@libos/sdk';
import { sql } from 'kysely';
import { readThrough } from '../store/memo-of.js';
import type { Delivery, UnreadSummary } from './messages.js';
import type { KernelStore } from '../store/kernel-database.js';

/** How many unread ids a summary names (the oldest first). */
export const UNREAD_IDS_NAMED = 20;

type Row = { id: string; channel: string; correlation_id: string | null; delivery: string; n: number | bigint };

const EMPTY: UnreadSummary = { count: 0, message_ids: [], channels: [], correlation_ids: [] };

function summarise(rows: readonly Row[]): UnreadSummary {
  if (rows.length === 0) return EMPTY;
  const uniq = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => x !== null))];
  return {
    count: Number(rows[0]!.n),
    message_ids: rows.map((r) => r.id),
    channels: uniq(rows.map((r) => r.channel)),
    correlation_ids: uniq(rows.map((r) => r.correlation_id)),
  };
}

/**
 * Unread mail of one delivery, summarised for a notice or an interrupt refusal: the oldest UNREAD_IDS_NAMED of them,
 * and their count. Read with the other delivery's in one query (`unreadByDelivery`), which a call asks twice (its
 * interrupt check, its notice) and a turn's prompt once: one read serves all three until the mailbox changes.
 */
export async function unreadOf(db: KernelStore, pid: string, delivery: Delivery): Promise<UnreadSummary> {
  return (await unreadByDelivery(db, pid))[delivery];
}

/** Unread mail of both deliveries in one query (a turn's prompt restates it). */
export function unreadByDelivery(db: KernelStore, pid: string): Promise<Readonly<Record<Delivery, UnreadSummary>>> {
  return readThrough(db, ['process_messages'], `unread:both:${pid}`, () => readUnreadByDelivery(db, pid));
}

/** Unread mail of both deliveries, ranked: compiled once per store (every turn's prompt restates it). */
const UNREAD_RANKED = preparedQuery(1, (db: KernelStore, [pid]) => {
  const ranked = db
    .selectFrom('process_messages')
    .select([
      'id',
      'channel',
      'correlation_id',
      'delivery',
      'seq',
      sql<number>`count(*) over (partition by delivery)`.as('n'),
      sql<number>`row_number() over (partition by delivery order by seq)`.as('rn'),
    ])
    .where('recipient_pid', '=', pid!)
    .where('status', '=', 'unread')
    .as('u');
  return db.selectFrom(ranked).selectAll().where('rn', '<=', UNREAD_IDS_NAMED).orderBy('seq');
});

async function readUnreadByDelivery(db: KernelStore, pid: string): Promise<Readonly<Record<Delivery, UnreadSummary>>> {
  const { rows } = await db.executeQuery(UNREAD_RANKED(db, [pid]));
  return {
    normal: summarise(rows.filter((r) => r.delivery === 'normal')),
    interrupt: summarise(rows.filter((r) => r.delivery === 'interrupt')),
  };
}
