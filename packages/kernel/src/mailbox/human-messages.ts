import { sql } from 'kysely';
import { LibosError, type HumanMessage } from '@libos/sdk';
import type { KernelStore } from '../store/kernel-database.js';

/** Senders outside the process tree write as `human:<name>`; only their messages are Human input. */
export const HUMAN_SENDER_PREFIX = 'human:';

/**
 * Human messages of a recipient (sender `human:*`), unread and acked, oldest first; at most `limit` when given.
 *
 * @example
 * const msgs = await humanMessagesOf(db, pid, { limit: 1001 });
 */
export async function humanMessagesOf(db: KernelStore, pid: string, opts: { readonly limit?: number } = {}): Promise<HumanMessage[]> {
  if (opts.limit !== undefined && (!Number.isInteger(opts.limit) || opts.limit < 0)) {
    throw new LibosError('invalid_arguments', `limit: must be a non-negative integer (got ${opts.limit})`, { details: { field: 'limit' } });
  }
  let sel = db
    .selectFrom('process_messages')
    .selectAll()
    .where('recipient_pid', '=', pid)
    // Exact, case-sensitive prefix (SQLite LIKE would fold ASCII case).
    .where(sql`substr(sender, 1, ${HUMAN_SENDER_PREFIX.length})`, '=', HUMAN_SENDER_PREFIX)
    // A message superseded by a checkpoint restore is history, not input to review.
    .where('status', 'in', ['unread', 'acked'])
    .$narrowType<{ status: 'unread' | 'acked' }>()
    .orderBy('seq');
  if (opts.limit !== undefined) sel = sel.limit(opts.limit);
  const rows = await sel.execute();
  return rows.map((r) => ({
    message_id: r.id,
    status: r.status,
    sender: r.sender,
    recipient_pid: r.recipient_pid,
    kind: r.kind,
    channel: r.channel,
    correlation_id: r.correlation_id,
    reply_to: r.reply_to,
    subject: r.subject,
    body: r.body,
    payload: JSON.parse(r.payload),
  }));
}
