import { defineTool, LibosError, z, type ToolContext } from '@libos/sdk';
import { getProcess } from '../processes/process-store.js';
import type { TxScope } from '../store/transaction.js';
import { ackMessages, assertMessagePayload, queryMessages } from './messages.js';
import { postMessage } from './post-message.js';

const scopeOf = (ctx: ToolContext) => ctx as unknown as TxScope;
const nowIso = (ctx: ToolContext) => ctx.clock.now().toISOString();

const filterFields = {
  sender_pid: z.string().min(1).optional().describe('only messages from this sender (a pid or human:<name>)'),
  channel: z.string().min(1).max(64).optional(),
  kind: z.string().min(1).max(64).optional(),
  message_ids: z.array(z.string()).max(100).optional().describe('exact ids; [] matches nothing'),
};

/** The mailbox tools (Skill `agent-libos-child-processes`): send, receive (optionally blocking) and read with ACK. */
export function mailboxTools() {
  const send = defineTool({
    name: 'send_process_message',
    description: 'Send a JSON message to yourself, your parent or a direct child. delivery "interrupt" stops its next non-message tool call until it reads.',
    input: z.object({
      to_pid: z.string().min(1),
      payload: z.json(),
      channel: z.string().min(1).max(64).default('default'),
      kind: z.string().min(1).max(64).default('message'),
      delivery: z.enum(['normal', 'interrupt']).default('normal'),
    }),
    async run({ to_pid, payload, channel, kind, delivery }, ctx) {
      const me = await getProcess(scopeOf(ctx).store, ctx.pid);
      const isChild = to_pid !== ctx.pid && to_pid !== me.parentPid && Boolean(await scopeOf(ctx).store.selectFrom('processes').select('pid').where('pid', '=', to_pid).where('parent_pid', '=', ctx.pid).executeTakeFirst());
      if (to_pid !== ctx.pid && to_pid !== me.parentPid && !isChild) throw new LibosError('permission_denied', `to_pid: ${ctx.pid} may message only itself, its parent or its direct children (not ${to_pid})`);
      assertMessagePayload(payload);
      const m = await postMessage(scopeOf(ctx), { recipientPid: to_pid, sender: ctx.pid, channel, kind, delivery, payload });
      return { message_id: m.message_id, to_pid, channel, kind, delivery, status: m.status };
    },
  });

  const receive = defineTool({
    name: 'receive_process_messages',
    description: 'Take unread messages that match the filters (ACKed by default). block=true waits for a matching message when none is unread.',
    input: z.object({ ...filterFields, limit: z.number().int().min(0).max(100).default(20), block: z.boolean().default(false), ack: z.boolean().default(true) }),
    async run({ sender_pid, channel, kind, message_ids, limit, block, ack }, ctx) {
      const filters = { ...(sender_pid ? { sender_pid } : {}), ...(channel ? { channel } : {}), ...(kind ? { kind } : {}), ...(message_ids ? { message_ids } : {}) };
      const { messages, hasMore } = await queryMessages(scopeOf(ctx).store, ctx.pid, filters, { includeAcked: false, limit });
      // An empty id list or a zero limit can never be satisfied, so it never blocks.
      if (messages.length === 0 && block && limit > 0 && !(message_ids && message_ids.length === 0)) ctx.wait({ kind: 'message', filters });
      if (ack) await ackMessages(scopeOf(ctx).store, messages.map((m) => m.message_id), nowIso(ctx));
      return { messages: messages.map((m) => ({ ...m, status: ack ? 'acked' : m.status })), has_more: hasMore };
    },
  });

  const read = defineTool({
    name: 'read_process_messages',
    description: 'Read messages by exact message_ids or filters, optionally including ACKed ones; ack=false leaves their status unchanged.',
    input: z.object({ ...filterFields, include_acked: z.boolean().default(false), ack: z.boolean().default(true), limit: z.number().int().min(1).max(100).default(50) }),
    async run({ sender_pid, channel, kind, message_ids, include_acked, ack, limit }, ctx) {
      const filters = { ...(sender_pid ? { sender_pid } : {}), ...(channel ? { channel } : {}), ...(kind ? { kind } : {}), ...(message_ids ? { message_ids } : {}) };
      const { messages, hasMore } = await queryMessages(scopeOf(ctx).store, ctx.pid, filters, { includeAcked: include_acked, limit });
      if (ack) await ackMessages(scopeOf(ctx).store, messages.filter((m) => m.status === 'unread').map((m) => m.message_id), nowIso(ctx));
      return { messages: messages.map((m) => ({ ...m, status: ack ? 'acked' : m.status })), has_more: hasMore, returned_ids: messages.map((m) => m.message_id) };
    },
  });

  return [send, receive, read];
}
