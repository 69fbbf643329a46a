import { defineTool, LibosError, SERVICE_NAMES, z, type ObjectsService, type ToolContext } from '@libos/sdk';
import { createHumanRequest, getHumanRequest } from '../human/human-queue.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { endProcess } from '../processes/exit.js';
import { TERMINAL_PROCESS_STATUSES, type ProcessInfo } from '../processes/process-record.js';
import { getProcess } from '../processes/process-store.js';
import { spawnInScope } from '../processes/spawn.js';
import { clearSink, humanSink } from '../sinks/clear-sink.js';
import { transition } from '../processes/transition.js';
import { resources } from '@libos/sdk';
import { kernelScope } from '../store/kernel-scope.js';

const scopeOf = (ctx: ToolContext) => kernelScope(ctx);
const nowIso = (ctx: ToolContext) => ctx.clock.now().toISOString();

/** The caller's direct child, or `not_direct_child` (the same answer for a pid that does not exist). */
async function directChild(ctx: ToolContext, childPid: string): Promise<ProcessInfo> {
  const child = await scopeOf(ctx)
    .store.selectFrom('processes')
    .select('pid')
    .where('pid', '=', childPid)
    .where('parent_pid', '=', ctx.pid)
    .executeTakeFirst();
  if (!child)
    throw new LibosError('not_direct_child', `child_pid: ${childPid} is not a direct child of ${ctx.pid}`, {
      details: { child_pid: childPid },
    });
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

/** The child-process and mailbox tools (Skill `agent-libos-child-processes`). */
export function childProcessTools(deps: () => KernelDeps) {
  const spawnChild = defineTool({
    name: 'spawn_child_process',
    description:
      'Spawn a child process with its own goal, namespace and budget (carved from yours). It inherits only the exact grants you pass.',
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
      if (imageId !== parent.imageId) await ctx.authority.require(resources.image(imageId), 'read');
      const d = deps();
      const specs = inherit_capabilities as { resource: string; rights: never[] }[];
      const labels = await ctx.flow.labels();
      // Every inherited spec is checked as a delegation before any child state exists.
      if (specs.length) await d.engine.preflightInherit(scopeOf(ctx), ctx.pid, specs);
      const child = await spawnInScope(d, scopeOf(ctx), {
        goal,
        image: imageId,
        parentPid: ctx.pid,
        labels,
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
      if (!TERMINAL_PROCESS_STATUSES.has(child.status)) {
        if (block) ctx.wait({ kind: 'child', child_pid });
        return {
          child_pid,
          status: child.status,
          ready: false,
          result_oid: null,
          wait_state: child.waitState,
          outcome: null,
          state_generation: child.stateGeneration,
        };
      }
      const resultOid = (child.outcome?.result_oid as string | null | undefined) ?? null;
      if (resultOid && deps().registry.services.has(SERVICE_NAMES.objects)) {
        await ctx.authority.grantTrusted({ subject: ctx.pid, resource: resources.object(resultOid), rights: ['read', 'materialize'] });
        await ctx.service<ObjectsService>(SERVICE_NAMES.objects).attachRoot(ctx.pid, resultOid);
      }
      return {
        child_pid,
        status: child.status,
        ready: true,
        result_oid: resultOid,
        wait_state: null,
        outcome: child.outcome,
        state_generation: child.stateGeneration,
      };
    },
  });
  const signalChild = defineTool({
    name: 'signal_child_process',
    description: 'Pause, resume, cancel or terminate a direct child. To interrupt one, send it an interrupt message.',
    input: z.object({
      child_pid: z.string().min(1),
      signal: z.enum(['pause', 'resume', 'cancel', 'terminate', 'interrupt']),
      reason: z.string().max(2000).optional(),
    }),
    async run({ child_pid, signal, reason }, ctx) {
      if (signal === 'interrupt')
        throw new LibosError(
          'invalid_arguments',
          'signal: interrupt is not a signal; send_process_message with delivery "interrupt" instead',
        );
      const child = await directChild(ctx, child_pid);
      if (TERMINAL_PROCESS_STATUSES.has(child.status))
        throw new LibosError('invalid_state', `child_pid: ${child_pid} is already ${child.status}`);
      const db = scopeOf(ctx).store;
      let after: ProcessInfo;
      if (signal === 'pause') {
        after = await transition(
          db,
          child_pid,
          { from: ['runnable', 'created'], to: 'paused', wait: { kind: 'paused', ...(reason ? { reason } : {}) } },
          nowIso(ctx),
        );
      } else if (signal === 'resume') {
        after = await transition(db, child_pid, { from: ['paused'], to: 'runnable' }, nowIso(ctx));
      } else {
        after = await endProcess(deps(), scopeOf(ctx), child_pid, {
          kind: 'killed',
          code: signal === 'cancel' ? 'cancelled' : 'terminated',
          ...(reason ? { reason } : {}),
        });
      }
      await ctx.events.emit('process_signalled', { pid: child_pid, signal, by: ctx.pid });
      await ctx.audit.record({
        action: 'process.signal',
        target: resources.process(child_pid),
        decision: signal,
        details: { status: after.status },
      });
      return { child_pid, signal, status: after.status, state_generation: after.stateGeneration };
    },
  });

  const askHuman = defineTool({
    name: 'ask_human',
    description:
      'Ask a human one question and wait for the answer. Fails if rejected, cancelled, or the human is not cleared for what you read.',
    input: z.object({
      question: z.string().min(1).max(8000),
      human: z
        .string()
        .regex(/^[a-z0-9][a-z0-9._-]*$/)
        .max(64)
        .default('owner'),
    }),
    async run({ question, human }, ctx) {
      const db = scopeOf(ctx).store;
      if (ctx.resumed) {
        // The answer arrived (or the request ended): find the request this call made.
        const row = await db
          .selectFrom('human_requests')
          .select('id')
          .where('pid', '=', ctx.pid)
          .where('kind', '=', 'question')
          .orderBy('seq', 'desc')
          .limit(1)
          .executeTakeFirst();
        const req = row ? await getHumanRequest(db, row.id) : null;
        if (!req) throw new LibosError('human_request_not_found', `the question of ${ctx.pid} is gone`);
        if (req.status === 'pending') ctx.wait({ kind: 'human', request_ids: [req.id] });
        if (req.status !== 'approved')
          throw new LibosError(
            req.status === 'cancelled' ? 'cancelled' : 'permission_denied',
            `human ${human} ${req.status} the question ${req.id}`,
            { details: { request_id: req.id, status: req.status } },
          );
        return { request_id: req.id, status: req.status, answer: (req.response?.answer as string | undefined) ?? null };
      }
      await ctx.authority.require(resources.human(human), 'write');
      // The question carries what the process has observed: it leaves only for a human cleared for it.
      await clearSink(deps().engine, ctx, ctx.pid, humanSink(human, 'question'), { labels: await ctx.flow.labels(), field: 'question' });
      const req = await createHumanRequest(db, ctx.pid, { kind: 'question', prompt: question, details: { human } }, nowIso(ctx));
      await ctx.events.emit('human_request_created', { pid: ctx.pid, request_id: req.id, kind: 'question' });
      ctx.wait({ kind: 'human', request_ids: [req.id] });
    },
  });

  return [spawnChild, waitChild, signalChild, askHuman];
}
