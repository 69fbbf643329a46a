import { assertJsonBounds, joinLabels, LibosError, newId, type DataLabels, type MessageFilters } from '@libos/sdk';
import type { Selectable } from 'kysely';
import type { KernelStore, ProcessMessagesTable } from '../store/kernel-database.js';

export type Delivery = 'normal' | 'interrupt';

/**
 * Filters of a read, a receive or a message wait: every given field must match (AND). `message_ids` matches by
 * membership, and `[]` matches nothing. (The sdk's `MessageFilters` plus the correlation fields.)
 */
export interface MailFilters extends MessageFilters {
  readonly correlation_id?: string;
  readonly reply_to?: string;
}

/** A process message as tools return it. */
export interface ProcessMessage {
  readonly message_id: string;
  readonly sender: string;
  readonly recipient_pid: string;
  readonly channel: string;
  readonly kind: string;
  readonly delivery: Delivery;
  readonly subject: string;
  readonly body: string;
  readonly correlation_id: string | null;
  readonly reply_to: string | null;
  readonly payload: unknown;
  readonly status: 'unread' | 'acked';
  readonly created_at: string;
  readonly acked_at: string | null;
}

/** A row a read returned: those read are unread or acked (a restore's superseded ones are never returned). */
type ReadRow = Selectable<ProcessMessagesTable> & { readonly status: ProcessMessage['status'] };

const toMessage = (r: ReadRow): ProcessMessage => ({
  message_id: r.id,
  sender: r.sender,
  recipient_pid: r.recipient_pid,
  channel: r.channel,
  kind: r.kind,
  delivery: r.delivery,
  subject: r.subject,
  body: r.body,
  correlation_id: r.correlation_id,
  reply_to: r.reply_to,
  payload: JSON.parse(r.payload),
  status: r.status,
  created_at: r.created_at,
  acked_at: r.acked_at,
});

/** True when a message satisfies every given filter field. */
export function messageMatches(
  m: Pick<ProcessMessage, 'message_id' | 'sender' | 'channel' | 'kind' | 'correlation_id' | 'reply_to'>,
  f: MailFilters,
): boolean {
  if (f.sender_pid !== undefined && m.sender !== f.sender_pid) return false;
  if (f.channel !== undefined && m.channel !== f.channel) return false;
  if (f.kind !== undefined && m.kind !== f.kind) return false;
  if (f.correlation_id !== undefined && m.correlation_id !== f.correlation_id) return false;
  if (f.reply_to !== undefined && m.reply_to !== f.reply_to) return false;
  if (f.message_ids !== undefined && !f.message_ids.includes(m.message_id)) return false;
  return true;
}

export interface NewMessage {
  readonly recipientPid: string;
  readonly sender: string;
  readonly channel?: string;
  readonly kind?: string;
  readonly delivery?: Delivery;
  readonly subject?: string;
  readonly body?: string;
  readonly correlationId?: string;
  readonly replyTo?: string;
  readonly payload: unknown;
  /** The labels the content carries (a process's flow when it sent it; external input for a human). */
  readonly labels?: DataLabels;
}

export async function insertMessage(db: KernelStore, m: NewMessage, nowIso: string): Promise<ProcessMessage> {
  const id = newId('msg');
  await db
    .insertInto('process_messages')
    .values({
      id,
      recipient_pid: m.recipientPid,
      sender: m.sender,
      channel: m.channel ?? 'default',
      kind: m.kind ?? 'message',
      delivery: m.delivery ?? 'normal',
      subject: m.subject ?? '',
      body: m.body ?? '',
      correlation_id: m.correlationId ?? null,
      reply_to: m.replyTo ?? null,
      payload: JSON.stringify(m.payload ?? null),
      labels: m.labels ? JSON.stringify(m.labels) : null,
      status: 'unread',
      created_at: nowIso,
      acked_at: null,
    })
    .execute();
  const row = await db
    .selectFrom('process_messages')
    .selectAll()
    .where('id', '=', id)
    .$narrowType<{ status: 'unread' }>()
    .executeTakeFirstOrThrow();
  return toMessage(row);
}

/**
 * Messages of a recipient, oldest first, matching filters; unread only unless includeAcked. `omitted` counts the
 * matches beyond `limit` (so `hasMore` is `omitted > 0`).
 */
export async function queryMessages(
  db: KernelStore,
  pid: string,
  f: MailFilters,
  opts: { includeAcked: boolean; limit: number },
): Promise<{ messages: ProcessMessage[]; hasMore: boolean; omitted: number }> {
  if (f.message_ids !== undefined && f.message_ids.length === 0) return { messages: [], hasMore: false, omitted: 0 };
  let sel = db.selectFrom('process_messages').where('recipient_pid', '=', pid);
  // A message superseded by a checkpoint restore is history: no read returns it.
  sel = opts.includeAcked ? sel.where('status', 'in', ['unread', 'acked']) : sel.where('status', '=', 'unread');
  if (f.sender_pid !== undefined) sel = sel.where('sender', '=', f.sender_pid);
  if (f.channel !== undefined) sel = sel.where('channel', '=', f.channel);
  if (f.kind !== undefined) sel = sel.where('kind', '=', f.kind);
  if (f.correlation_id !== undefined) sel = sel.where('correlation_id', '=', f.correlation_id);
  if (f.reply_to !== undefined) sel = sel.where('reply_to', '=', f.reply_to);
  if (f.message_ids !== undefined) sel = sel.where('id', 'in', [...f.message_ids]);
  const read = sel.selectAll().$narrowType<{ status: ProcessMessage['status'] }>();
  const rows = opts.limit > 0 ? await read.orderBy('seq').limit(opts.limit).execute() : [];
  const { n } = await sel.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const omitted = Math.max(0, Number(n) - rows.length);
  return { messages: rows.map(toMessage), hasMore: omitted > 0, omitted };
}

/** The joined labels of these messages (what a reader observes by reading them); null when none carries labels. */
export async function messagesLabels(db: KernelStore, ids: readonly string[]): Promise<DataLabels | null> {
  if (ids.length === 0) return null;
  const rows = await db
    .selectFrom('process_messages')
    .select('labels')
    .where('id', 'in', [...ids])
    .execute();
  const labels = rows
    .map((r) => r.labels)
    .filter((l): l is string => typeof l === 'string')
    .map((l) => JSON.parse(l) as DataLabels);
  return labels.length ? joinLabels(labels) : null;
}

/** Marks messages acked (only unread ones change). */
export async function ackMessages(db: KernelStore, ids: readonly string[], nowIso: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('process_messages')
    .set({ status: 'acked', acked_at: nowIso })
    .where('id', 'in', [...ids])
    .where('status', '=', 'unread')
    .execute();
}

/** What a notice says about unread mail of one delivery: how many, and (the oldest ≤ 20 of) which. */
export interface UnreadSummary {
  readonly count: number;
  readonly message_ids: readonly string[];
  readonly channels: readonly string[];
  readonly correlation_ids: readonly string[];
}

/** Most UTF-8 bytes of a message payload's JSON. */
export const MAX_MESSAGE_BYTES = 65_536;

/**
 * Throws `invalid_arguments` unless `payload` is JSON within the shared bounds (`JSON_LIMITS`: depth, values) and
 * the message bound. One check for both paths: a process's `send_process_message` and the host's `sendMessage`.
 */
export function assertMessagePayload(payload: unknown): void {
  assertJsonBounds(payload ?? null, 'payload');
  const text = JSON.stringify(payload ?? null);
  if (Buffer.byteLength(text, 'utf8') > MAX_MESSAGE_BYTES)
    throw new LibosError(
      'invalid_arguments',
      `payload: must be at most ${MAX_MESSAGE_BYTES} bytes of JSON (got ${Buffer.byteLength(text, 'utf8')})`,
    );
}
