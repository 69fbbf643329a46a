import { defineTool, LibosError, SERVICE_NAMES, z, type ObjectsService, type ToolContext } from '@libos/sdk';
import { createHumanRequest, getHumanRequest } from '../human/human-queue.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { ackMessages, assertMessagePayload, queryMessages } from '../mailbox/messages.js';
import { postMessage } from '../mailbox/post-message.js';
import { endProcess } from '../processes/exit.js';
import { TERMINAL_STATUSES, type ProcessInfo } from '../processes/process-record.js';
import { getProcess } from '../processes/process-store.js';
import { spawnInScope } from '../processes/spawn.js';
import { transition } from '../processes/transition.js';
import type { TxScope } from '../store/transaction.js';

const scopeOf = (ctx: ToolContext) => ctx as unknown as TxScope;
const nowIso = (ctx: ToolContext) => ctx.clock.now().toISOString();

/** The caller's direct child, or `not_direct_child` (the same answer for a pid that does not exist). */
async function directChild(ctx: ToolContext, childPid: string): Promise<ProcessInfo> {
  const child = await scopeOf(ctx).store.selectFrom('processes').select('pid').where('pid', '=', childPid).where('parent_pid', '=', ctx.pid).executeTakeFirst();
  if (!child) throw new LibosError('not_direct_child', `child_pid: ${childPid} is not a direct child of ${ctx.pid}`, { details: { child_pid: childPid } });
  return getProcess(scopeOf(ctx).store, childPid);
}

const budgetInput = z
  .object({
    tool_calls: z.number().int().min(1).optional(),
    child_processes: z.number().int().min(0).optional(),
    llm_calls: z.number().int().min(0).optional(),
    llm_total_tokens: z.number().int().min(0).optional(),
  })
  .strict();

const filterFields = {
  sender_pid: z.string().min(1).optional().describe('only messages from this sender (a pid or human:<name>)'),
  channel: z.string().min(1).max(64).optional(),
  kind: z.string().min(1).max(64).optional(),
  message_ids: z.array(z.string()).max(100).optional().describe('exact ids; [] matches nothing'),
};

/** The child-process and mailbox tools (Skill `agent-libos-child-processes`). */
export function childProcessTools(deps: () => KernelDeps) {
  const spawnChild = defineTool({
    name: 'spawn_child_process',
    description: 'Spawn a child process with its own goal, namespace and budget (carved from yours). It inherits only the exact grants you pass.',
    input: z.object({
      goal: z.string().min(1).max(32_000),
      image: z.string().min(1).optional().describe('image id; default is your own image'),
      budget: budgetInput.optional(),
      inherit_capabilities: z
        .array(z.object({ resource: z.string().min(1), rights: z.array(z.string()).min(1) }).strict())
        .max(32)
        .default([])
        .describe('exact specs, each covered by a delegable grant you hold'),
    }),
    async run({ goal, image, budget, inherit_capabilities }, ctx) {
      await ctx.authority.require('process:spawn', 'write');
      const parent = await getProcess(scopeOf(ctx).store, ctx.pid);
      const imageId = image ?? parent.imageId;
      if (imageId !== parent.imageId) await ctx.authority.require(`image:${imageId}`, 'read');
      const d = deps();
      const specs = inherit_capabilities as { resource: string; rights: never[] }[];
      const child = await spawnInScope(d, scopeOf(ctx), {
        goal,
        image: imageId,
        parentPid: ctx.pid,
        ...(budget ? { budget } : {}),
        beforeRunnable: async (pid) => {
          if (specs.length) await d.engine.inheritForSpawn(scopeOf(ctx), ctx.pid, pid, specs);
        },
      });
      return { pid: child.pid, parent_pid: ctx.pid, image: child.imageId, status: child.status, goal_oid: child.goalOid };
    },
  });

  const waitChild = defineTool({
    name: 'wait_child_process',
    description: 'Wait for a direct child to end. block=true parks you until it does (no polling); block=false answers at once.',
    input: z.object({ child_pid: z.string().min(1), block: z.boolean().default(true) }),
    async run({ child_pid, block }, ctx) {
      const child = await directChild(ctx, child_pid);
      if (!TERMINAL_STATUSES.has(child.status)) {
        if (block) ctx.wait({ kind: 'child', child_pid });
        return { child_pid, status: child.status, ready: false, result_oid: null, wait_state: child.waitState, outcome: null, state_generation: child.stateGeneration };
      }
      const resultOid = (child.outcome?.result_oid as string | null | undefined) ?? null;
      if (resultOid && deps().registry.services.has(SERVICE_NAMES.objects)) {
        await ctx.authority.grantTrusted({ subject: ctx.pid, resource: `object:${resultOid}`, rights: ['read', 'materialize'] });
        await ctx.service<ObjectsService>(SERVICE_NAMES.objects).attachRoot(ctx.pid, resultOid);
      }
      return { child_pid, status: child.status, ready: true, result_oid: resultOid, wait_state: null, outcome: child.outcome, state_generation: child.stateGeneration };
    },
  });
  const signalChild = defineTool({
    name: 'signal_child_process',
    description: 'Pause, resume, cancel or terminate a direct child. To interrupt one, send it an interrupt message.',
    input: z.object({ child_pid: z.string().min(1), signal: z.enum(['pause', 'resume', 'cancel', 'terminate', 'interrupt']), reason: z.string().max(2000).optional() }),
    async run({ child_pid, signal, reason }, ctx) {
      if (signal === 'interrupt') throw new LibosError('invalid_arguments', 'signal: interrupt is not a signal; send_process_message with delivery "interrupt" instead');
      const child = await directChild(ctx, child_pid);
      if (TERMINAL_STATUSES.has(child.status)) throw new LibosError('invalid_state', `child_pid: ${child_pid} is already ${child.status}`);
      const db = scopeOf(ctx).store;
      let after: ProcessInfo;
      if (signal === 'pause') {
        after = await transition(db, child_pid, { from: ['runnable', 'created'], to: 'paused', wait: { kind: 'paused', ...(reason ? { reason } : {}) } }, nowIso(ctx));
      } else if (signal === 'resume') {
        after = await transition(db, child_pid, { from: ['paused'], to: 'runnable' }, nowIso(ctx));
      } else {
        after = await endProcess(deps(), scopeOf(ctx), child_pid, { kind: 'killed', code: signal === 'cancel' ? 'cancelled' : 'terminated', ...(reason ? { reason } : {}) });
      }
      await ctx.events.emit('process_signalled', { pid: child_pid, signal, by: ctx.pid });
      await ctx.audit.record({ action: 'process.signal', target: `process:${child_pid}`, decision: signal, details: { status: after.status } });
      return { child_pid, signal, status: after.status, state_generation: after.stateGeneration };
    },
  });

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

  const askHuman = defineTool({
    name: 'ask_human',
    description: 'Ask a human one question and wait for the answer. A rejected or cancelled question fails this call.',
    input: z.object({ question: z.string().min(1).max(8000), human: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/).max(64).default('owner') }),
    async run({ question, human }, ctx) {
      const db = scopeOf(ctx).store;
      if (ctx.resumed) {
        // The answer arrived (or the request ended): find the request this call made.
        const row = await db.selectFrom('human_requests').select('id').where('pid', '=', ctx.pid).where('kind', '=', 'question').orderBy('seq', 'desc').limit(1).executeTakeFirst();
        const req = row ? await getHumanRequest(db, row.id) : null;
        if (!req) throw new LibosError('human_request_not_found', `the question of ${ctx.pid} is gone`);
        if (req.status === 'pending') ctx.wait({ kind: 'human', request_ids: [req.id] });
        if (req.status !== 'approved') throw new LibosError(req.status === 'cancelled' ? 'cancelled' : 'permission_denied', `human ${human} ${req.status} the question ${req.id}`, { details: { request_id: req.id, status: req.status } });
        return { request_id: req.id, status: req.status, answer: (req.response?.answer as string | undefined) ?? null };
      }
      await ctx.authority.require(`human:${human}`, 'write');
      const req = await createHumanRequest(db, ctx.pid, { kind: 'question', prompt: question, details: { human } }, nowIso(ctx));
      await ctx.events.emit('human_request_created', { pid: ctx.pid, request_id: req.id, kind: 'question' });
      ctx.wait({ kind: 'human', request_ids: [req.id] });
    },
  });

  return [spawnChild, waitChild, signalChild, send, receive, read, askHuman];
}
