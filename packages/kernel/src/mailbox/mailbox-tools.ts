import { assertNotMintingGrant } from '@libos/capabilities';
import { defineTool, LibosError, z, type ToolContext, type WaitSpec } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { getProcess } from '../processes/process-store.js';
import { clearSink } from '../sinks/clear-sink.js';
import { ackMessages, assertMessagePayload, messagesLabels, queryMessages, type MailFilters, type ProcessMessage } from './messages.js';
import { postMessage } from './post-message.js';
import { resources } from '@libos/sdk';
import { kernelScope } from '../store/kernel-scope.js';

const scopeOf = (ctx: ToolContext) => kernelScope(ctx);
const nowIso = (ctx: ToolContext) => ctx.clock.now().toISOString();

/** Bounds of the mailbox (docs/behaviour/object-tasks.md). */
export const MAILBOX_LIMITS = { subject: 512, body: 32_000, id: 128, ids: 1_000, limit: 1_000, defaultLimit: 100 } as const;

const messageId = z
  .string()
  .min(1)
  .max(MAILBOX_LIMITS.id)
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL');

const filterFields = {
  sender_pid: z.string().min(1).optional().describe('only messages from this sender (a pid or human:<name>)'),
  channel: z.string().min(1).max(64).optional(),
  kind: z.string().min(1).max(64).optional(),
  correlation_id: messageId.optional(),
  reply_to: messageId.optional(),
  message_ids: z.array(messageId).max(MAILBOX_LIMITS.ids).optional().describe('exact ids; [] matches nothing'),
  limit: z.number().int().min(0).max(MAILBOX_LIMITS.limit).default(MAILBOX_LIMITS.defaultLimit),
  ack: z.boolean().default(true).describe('mark the returned unread messages acked (false: leave their status unchanged)'),
};

type FilterArgs = {
  sender_pid?: string | undefined;
  channel?: string | undefined;
  kind?: string | undefined;
  correlation_id?: string | undefined;
  reply_to?: string | undefined;
  message_ids?: string[] | undefined;
};

function filtersOf(a: FilterArgs): MailFilters {
  const f: Record<string, unknown> = {};
  for (const k of ['sender_pid', 'channel', 'kind', 'correlation_id', 'reply_to', 'message_ids'] as const)
    if (a[k] !== undefined) f[k] = a[k];
  return f as MailFilters;
}

/**
 * One read in the call's transaction: matching messages oldest first, ACKing the unread ones returned when `ack`
 * (committed with the result). `omitted_count` = matches − returned; a `continuation` names the tool to call again
 * with the same filters (there is no cursor: only an acking read advances).
 */
async function take(ctx: ToolContext, tool: string, f: MailFilters, o: { includeAcked: boolean; limit: number; ack: boolean }) {
  const { messages, hasMore, omitted } = await queryMessages(scopeOf(ctx).store, ctx.pid, f, {
    includeAcked: o.includeAcked,
    limit: o.limit,
  });
  const now = nowIso(ctx);
  const acked = o.ack ? messages.filter((m) => m.status === 'unread').map((m) => m.message_id) : [];
  await ackMessages(scopeOf(ctx).store, acked, now);
  const ackedSet = new Set(acked);
  const shown = messages.map((m): ProcessMessage => (ackedSet.has(m.message_id) ? { ...m, status: 'acked', acked_at: now } : m));
  // Reading a message observes its content: the reader's flow takes on the labels it carries.
  const labels = await messagesLabels(
    scopeOf(ctx).store,
    messages.map((m) => m.message_id),
  );
  if (labels) await ctx.flow.taint(labels);
  return {
    messages: shown,
    acked_message_ids: acked,
    has_more: hasMore,
    omitted_count: omitted,
    continuation: hasMore ? { tool, same_filters: true } : null,
  };
}

/** The mailbox tools (Skill `agent-libos-child-processes`): send, receive (optionally blocking) and read with ACK. */
export function mailboxTools(deps: () => KernelDeps) {
  const send = defineTool({
    name: 'send_process_message',
    description:
      'Send a JSON message to yourself, your parent or a direct child. delivery "interrupt" stops its next ' +
      'non-message tool call until it reads.',
    input: z.object({
      to_pid: z.string().min(1),
      payload: z.json(),
      channel: z.string().min(1).max(64).default('default'),
      kind: z.string().min(1).max(64).default('message'),
      delivery: z.enum(['normal', 'interrupt']).default('normal'),
      subject: z.string().max(MAILBOX_LIMITS.subject).default(''),
      body: z.string().max(MAILBOX_LIMITS.body).default(''),
      correlation_id: messageId.optional().describe('ties a reply or a notification to what it answers'),
      reply_to: messageId.optional().describe('the message_id this one answers'),
    }),
    async run({ to_pid, payload, channel, kind, delivery, subject, body, correlation_id, reply_to }, ctx) {
      const me = await getProcess(scopeOf(ctx).store, ctx.pid);
      const isChild =
        to_pid !== ctx.pid &&
        to_pid !== me.parentPid &&
        Boolean(
          await scopeOf(ctx)
            .store.selectFrom('processes')
            .select('pid')
            .where('pid', '=', to_pid)
            .where('parent_pid', '=', ctx.pid)
            .executeTakeFirst(),
        );
      if (to_pid !== ctx.pid && to_pid !== me.parentPid && !isChild)
        throw new LibosError(
          'permission_denied',
          `to_pid: ${ctx.pid} may message only itself, its parent or its direct children (not ${to_pid})`,
        );
      assertMessagePayload(payload);
      // A message is model-written data: it can never carry authority, so a grant-shaped payload is refused.
      assertNotMintingGrant(payload, 'payload');
      // Sink clearance: the content carries the sender's flow labels to the recipient.
      const labels = await ctx.flow.labels();
      await clearSink(deps().engine, ctx, ctx.pid, resources.process(to_pid), { labels, field: 'to_pid' });
      const m = await postMessage(scopeOf(ctx), {
        labels,
        recipientPid: to_pid,
        sender: ctx.pid,
        channel,
        kind,
        delivery,
        subject,
        body,
        ...(correlation_id !== undefined ? { correlationId: correlation_id } : {}),
        ...(reply_to !== undefined ? { replyTo: reply_to } : {}),
        payload,
      });
      return {
        message_id: m.message_id,
        to_pid,
        channel,
        kind,
        delivery,
        status: m.status,
        subject: m.subject,
        correlation_id: m.correlation_id,
        reply_to: m.reply_to,
      };
    },
  });

  const receive = defineTool({
    name: 'receive_process_messages',
    description:
      'Take unread messages that match the filters (ACKed by default). block=true waits for a matching message ' +
      'when none is unread; a blocking receive needs a limit > 0 and, if given, non-empty message_ids.',
    input: z.object({ ...filterFields, block: z.boolean().default(false) }),
    async run(args, ctx) {
      const f = filtersOf(args);
      // An empty id list or a zero limit can never be satisfied: a blocking receive with one is refused, never parked.
      if (args.block && args.message_ids?.length === 0)
        throw new LibosError(
          'invalid_arguments',
          'message_ids: a blocking receive with [] can never match; pass the ids to wait for, or omit message_ids',
        );
      if (args.block && args.limit === 0) throw new LibosError('invalid_arguments', 'limit: a blocking receive needs limit >= 1');
      const r = await take(ctx, 'receive_process_messages', f, { includeAcked: false, limit: args.limit, ack: args.ack });
      if (r.messages.length === 0 && args.block) ctx.wait({ kind: 'message', filters: f } as WaitSpec);
      return { ready: r.messages.length > 0, ...r };
    },
  });

  const read = defineTool({
    name: 'read_process_messages',
    description:
      'Read messages by exact message_ids or filters, optionally including ACKed ones; ack=false leaves their ' +
      'status unchanged. Never blocks; has_more/omitted_count tell what the limit left out.',
    input: z.object({ ...filterFields, include_acked: z.boolean().default(false) }),
    async run(args, ctx) {
      return {
        ready: true,
        ...(await take(ctx, 'read_process_messages', filtersOf(args), {
          includeAcked: args.include_acked,
          limit: args.limit,
          ack: args.ack,
        })),
      };
    },
  });

  return [send, receive, read];
}
