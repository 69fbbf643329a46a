import type { Kysely } from 'kysely';
import { LibosError, newId, type MessageFilters } from '@libos/sdk';

export type Delivery = 'normal' | 'interrupt';

/** A process message as tools return it. */
export interface ProcessMessage {
  readonly message_id: string;
  readonly sender: string;
  readonly recipient_pid: string;
  readonly channel: string;
  readonly kind: string;
  readonly delivery: Delivery;
  readonly payload: unknown;
  readonly status: 'unread' | 'acked';
  readonly created_at: string;
  readonly acked_at: string | null;
}

const toMessage = (r: Record<string, any>): ProcessMessage => ({
  message_id: r.id,
  sender: r.sender,
  recipient_pid: r.recipient_pid,
  channel: r.channel,
  kind: r.kind,
  delivery: r.delivery,
  payload: JSON.parse(r.payload),
  status: r.status,
  created_at: r.created_at,
  acked_at: r.acked_at,
});

/** True when a message satisfies every given filter field. */
export function messageMatches(m: Pick<ProcessMessage, 'message_id' | 'sender' | 'channel' | 'kind'>, f: MessageFilters): boolean {
  if (f.sender_pid !== undefined && m.sender !== f.sender_pid) return false;
  if (f.channel !== undefined && m.channel !== f.channel) return false;
  if (f.kind !== undefined && m.kind !== f.kind) return false;
  if (f.message_ids !== undefined && !f.message_ids.includes(m.message_id)) return false;
  return true;
}

export interface NewMessage {
  readonly recipientPid: string;
  readonly sender: string;
  readonly channel?: string;
  readonly kind?: string;
  readonly delivery?: Delivery;
  readonly payload: unknown;
}

export async function insertMessage(db: Kysely<any>, m: NewMessage, nowIso: string): Promise<ProcessMessage> {
  const id = newId('msg');
  await db
    .insertInto('process_messages')
    .values({ id, recipient_pid: m.recipientPid, sender: m.sender, channel: m.channel ?? 'default', kind: m.kind ?? 'message', delivery: m.delivery ?? 'normal', payload: JSON.stringify(m.payload ?? null), status: 'unread', created_at: nowIso, acked_at: null })
    .execute();
  return toMessage((await db.selectFrom('process_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow()) as Record<string, any>);
}

/** Messages of a recipient, oldest first, matching filters; unread only unless includeAcked. Fetches limit + 1 to tell has_more. */
export async function queryMessages(db: Kysely<any>, pid: string, f: MessageFilters, opts: { includeAcked: boolean; limit: number }): Promise<{ messages: ProcessMessage[]; hasMore: boolean }> {
  let sel = db.selectFrom('process_messages').selectAll().where('recipient_pid', '=', pid);
  if (!opts.includeAcked) sel = sel.where('status', '=', 'unread');
  if (f.sender_pid !== undefined) sel = sel.where('sender', '=', f.sender_pid);
  if (f.channel !== undefined) sel = sel.where('channel', '=', f.channel);
  if (f.kind !== undefined) sel = sel.where('kind', '=', f.kind);
  if (f.message_ids !== undefined) {
    if (f.message_ids.length === 0) return { messages: [], hasMore: false };
    sel = sel.where('id', 'in', [...f.message_ids]);
  }
  const rows = await sel.orderBy('seq').limit(opts.limit + 1).execute();
  return { messages: rows.slice(0, opts.limit).map(toMessage), hasMore: rows.length > opts.limit };
}

/** Marks messages acked (only unread ones change). */
export async function ackMessages(db: Kysely<any>, ids: readonly string[], nowIso: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('process_messages').set({ status: 'acked', acked_at: nowIso }).where('id', 'in', [...ids]).where('status', '=', 'unread').execute();
}

/** Unread counts of a process by delivery. */
export async function unreadCounts(db: Kysely<any>, pid: string): Promise<{ normal: number; interrupt: number }> {
  const rows = await db
    .selectFrom('process_messages')
    .select(['delivery', (eb) => eb.fn.countAll<number>().as('n')])
    .where('recipient_pid', '=', pid)
    .where('status', '=', 'unread')
    .groupBy('delivery')
    .execute();
  const out = { normal: 0, interrupt: 0 };
  for (const r of rows) out[r.delivery as Delivery] = Number(r.n);
  return out;
}

/** Throws unless `payload` is JSON within the message bound. */
export const MAX_MESSAGE_BYTES = 65_536;
export function assertMessagePayload(payload: unknown): void {
  const text = JSON.stringify(payload ?? null);
  if (Buffer.byteLength(text, 'utf8') > MAX_MESSAGE_BYTES) throw new LibosError('invalid_arguments', `payload: must be at most ${MAX_MESSAGE_BYTES} bytes of JSON (got ${Buffer.byteLength(text, 'utf8')})`);
}
