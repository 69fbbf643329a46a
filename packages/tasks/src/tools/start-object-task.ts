import {
  defineTool,
  LibosError,
  newId,
  SERVICE_NAMES,
  z,
  type Decision,
  type ObjectsService,
  type ProcessService,
  type RunnerService,
  type ToolContext,
} from '@libos/sdk';
import { isTerminalProcessStatus, namespaces, resources } from '@libos/sdk';
import { TASKS_OBSERVER_SERVICE, type TasksState } from '../internal/state.js';
import { DEFAULT_NOTIFY_CHANNEL, NOTIFY_KINDS, taskInfoSchema, type TaskInfo } from '../task-info.js';
import { countActive, insertTask, tasksDb } from '../internal/task-store.js';
import { normalizeChannel, watchAtStart } from '../internal/validate.js';

const input = z.object({
  owner_oid: z.string().max(128).optional().describe('OID of the owner Object; when non-empty it wins over owner_name'),
  owner_name: z.string().max(256).optional().describe('exact name of the owner Object, looked up in namespace'),
  namespace: z.string().max(1024).optional().describe('namespace of owner_name; default your process scope'),
  tool: z.string().max(64).describe('the one tool to run; it must be in your own tool table'),
  args: z.record(z.string(), z.unknown()).default({}).describe("the tool's arguments, checked against its schema"),
  notify_pid: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe('who is told when it settles: you (default), your parent, or a live direct child'),
  notify_kind: z.enum(NOTIFY_KINDS).default('normal'),
  notify_channel: z.string().max(1024).default(DEFAULT_NOTIFY_CHANNEL),
  inherit_capabilities: z
    .array(
      z
        .object({
          resource: z.string().min(1),
          rights: z.array(z.string()).min(1),
          constraints: z.record(z.string(), z.unknown()).optional(),
        })
        .strict(),
    )
    .max(32)
    .default([])
    .describe('exact specs the runner inherits, each covered by a live delegable grant you hold'),
  grant_result_to_notify: z
    .boolean()
    .default(false)
    .describe('give a notify_pid other than you a read handle on the result (needs grant on it)'),
  owner_watch: z.boolean().default(false),
  watch_events: z.array(z.string().max(32)).max(8).default([]),
  watch_channel: z.string().max(1024).optional(),
  watch_kind: z.enum(NOTIFY_KINDS).default('normal'),
});

type StartArgs = z.output<typeof input>;

/** Steps 1–4 of admission: owner given, tool named, notification and watch settings well-formed, notify target related. */
async function checkRequest(ctx: ToolContext, a: StartArgs) {
  const ownerOid = a.owner_oid?.trim() ?? '';
  const ownerName = a.owner_name?.trim() ?? '';
  if (ownerOid === '' && ownerName === '') {
    throw new LibosError(
      'invalid_arguments',
      'owner_oid: pass owner_oid, or owner_name (with an optional namespace), of the mutable Object the task belongs to',
      { details: { field: 'owner_oid', fields: ['owner_oid', 'owner_name'] } },
    );
  }
  const tool = a.tool.trim();
  if (tool === '')
    throw new LibosError('invalid_arguments', 'tool: must name one tool (got a blank name)', {
      details: { field: 'tool', fields: ['tool'] },
    });
  const channel = normalizeChannel(a.notify_channel, 'notify_channel');
  const watch = watchAtStart(a);
  const notifyPid = a.notify_pid ?? ctx.pid;
  const processes = ctx.service<ProcessService>(SERVICE_NAMES.processes);
  let target: Awaited<ReturnType<ProcessService['get']>>;
  try {
    target = await processes.get(notifyPid);
  } catch (err) {
    if (err instanceof LibosError && err.code === 'process_not_found')
      throw new LibosError('process_not_found', `notify_pid: process ${notifyPid} does not exist`, {
        details: { field: 'notify_pid', pid: notifyPid },
      });
    throw err;
  }
  if (isTerminalProcessStatus(target.status))
    throw new LibosError('invalid_state', `notify_pid: process ${notifyPid} is ${target.status} and can receive no notification`, {
      details: { field: 'notify_pid', pid: notifyPid, status: target.status },
    });
  const me = await processes.get(ctx.pid);
  if (notifyPid !== ctx.pid && notifyPid !== me.parentPid && target.parentPid !== ctx.pid) {
    throw new LibosError(
      'permission_denied',
      `notify_pid: ${ctx.pid} may notify only itself, its parent or a direct child (not ${notifyPid})`,
      { details: { field: 'notify_pid', pid: notifyPid } },
    );
  }
  return { ownerOid, ownerName, tool, channel, watch, notifyPid };
}

/** Step 5: the owner resolves, the caller holds read, write and link on it (decisions returned unspent), and it exists. */
async function checkOwner(
  ctx: ToolContext,
  a: StartArgs,
  ownerOid: string,
  ownerName: string,
): Promise<{ oid: string; decisions: Decision[] }> {
  const objects = ctx.service<ObjectsService>(SERVICE_NAMES.objects);
  let oid = ownerOid;
  if (oid === '') {
    const namespace = a.namespace?.trim() ? a.namespace : namespaces.process(ctx.pid);
    const ref = await objects.lookup(namespace, ownerName);
    if (!ref)
      throw new LibosError(
        'object_not_found',
        `owner_name: no Object named ${JSON.stringify(ownerName)} in namespace ${JSON.stringify(namespace.trim())}`,
        { details: { field: 'owner_name', namespace, name: ownerName } },
      );
    oid = ref.oid;
  }
  const decisions: Decision[] = [];
  for (const right of ['read', 'write', 'link'] as const) {
    const d = await ctx.authority.check(resources.object(oid), right);
    if (!d.allowed) {
      const field = ownerOid !== '' ? 'owner_oid' : 'owner_name';
      throw new LibosError(
        'object_denied',
        `${field}: ${ctx.pid} lacks ${right} on the owner object:${oid} (an ObjectTask owner needs read, write ` +
          `and link; immutable Objects lack write)`,
        {
          details: { field, oid, missing_right: right },
        },
      );
    }
    decisions.push(d);
  }
  if (!(await objects.describe(oid)))
    throw new LibosError('object_not_found', `owner_oid: no live Object ${oid}`, { details: { field: 'owner_oid', oid } });
  return { oid, decisions };
}

/** Spends each finite grant behind the decisions once. */
async function spendOnce(ctx: ToolContext, decisions: readonly Decision[]): Promise<void> {
  const spent = new Set<string>();
  for (const d of decisions) {
    if (d.consumeId !== undefined && spent.has(d.consumeId)) continue;
    await ctx.authority.consume(d);
    if (d.consumeId !== undefined) spent.add(d.consumeId);
  }
}

/**
 * `start_object_task`: admits one call of a visible tool as an ObjectTask bound to an owner Object and starts its
 * runner. Everything happens in the call's transaction: a refused start leaves no runner, row or event.
 */
export function startObjectTask(state: TasksState) {
  return defineTool({
    name: 'start_object_task',
    description:
      'Run one call of a tool in your table in the background, as a task bound to a mutable owner Object. Returns ' +
      '{task}; save task_id and runner_pid.',
    input,
    output: z.object({ task: taskInfoSchema }),
    async run(a, ctx) {
      const req = await checkRequest(ctx, a);
      const owner = await checkOwner(ctx, a, req.ownerOid, req.ownerName);
      const runners = ctx.service<RunnerService>(SERVICE_NAMES.runners);
      const tool = await runners.resolveTool(ctx.pid, req.tool);
      const args = runners.validateArgs(tool.name, a.args);
      const db = tasksDb(ctx.store);
      const global = await countActive(db);
      if (global >= state.limits.maxActive) {
        throw new LibosError(
          'task_capacity_exceeded',
          `capacity: ${global} object tasks are active; at most ${state.limits.maxActive} may be at once`,
          { details: { scope: 'global', active: global, limit: state.limits.maxActive } },
        );
      }
      const onOwner = await countActive(db, owner.oid);
      if (onOwner >= state.limits.maxActivePerOwner) {
        throw new LibosError(
          'task_capacity_exceeded',
          `owner_oid: ${onOwner} object tasks are active on object:${owner.oid}; at most ${state.limits.maxActivePerOwner} may be at once`,
          {
            details: { scope: 'owner', owner_oid: owner.oid, active: onOwner, limit: state.limits.maxActivePerOwner },
          },
        );
      }
      await ctx.authority.require('process:spawn', 'write', {
        message: `process:spawn: ${ctx.pid} lacks write on process:spawn, which starting a task's runner needs`,
      });
      await spendOnce(ctx, owner.decisions);
      const taskId = newId('task');
      const runner = await runners.spawn({
        creatorPid: ctx.pid,
        operationId: taskId,
        observer: TASKS_OBSERVER_SERVICE,
        tool: tool.name,
        args,
        goal: JSON.stringify({ type: 'object_task', task_id: taskId, owner_oid: owner.oid, tool: tool.name }),
        grants: [{ resource: resources.object(owner.oid), rights: ['read', 'materialize'] }],
        inherit: a.inherit_capabilities,
      });
      const now = ctx.clock.now().toISOString();
      const task: TaskInfo = {
        task_id: taskId,
        owner_oid: owner.oid,
        creator_pid: ctx.pid,
        runner_pid: runner.pid,
        tool: tool.name,
        tool_id: `${tool.skill}/${tool.name}`,
        status: 'queued',
        result_oid: null,
        error: null,
        wait: {},
        notification: {
          recipient_pid: req.notifyPid,
          kind: a.notify_kind,
          channel: req.channel,
          subject: null,
          message_id: null,
          status: 'none',
          error: null,
        },
        owner_watch: req.watch,
        created_at: now,
        updated_at: now,
        started_at: null,
        completed_at: null,
      };
      await insertTask(db, task);
      // Live only: the result-grant intent never reaches the row.
      if (a.grant_result_to_notify) {
        state.live.set(taskId, { grantResultToNotify: true });
        ctx.onRollback(() => state.live.delete(taskId));
      }
      await ctx.events.emit('object_task_started', {
        pid: ctx.pid,
        task_id: taskId,
        owner_oid: owner.oid,
        runner_pid: runner.pid,
        tool: tool.name,
      });
      await ctx.audit.record({
        action: 'object_task.start',
        target: resources.objectTask(taskId),
        decision: 'queued',
        details: {
          owner_oid: owner.oid,
          runner_pid: runner.pid,
          tool: tool.name,
          notify_pid: req.notifyPid,
          inherited: a.inherit_capabilities.length,
        },
      });
      return { task };
    },
  });
}
