// Long file: the compaction tool and its staged job (authorize, spawn stages, collect, write back) share one job record.
import {
  defineTool,
  joinLabels,
  LibosError,
  SERVICE_NAMES,
  z,
  type DataLabels,
  type LlmContextService,
  type ObjectsService,
  type ProcessService,
  type ToolContext,
} from '@libos/sdk';
import { isTerminalProcessStatus, namespaces, resources } from '@libos/sdk';
import { chunkEntries } from './chunks.js';
import { asJob, failJob, loadJob, sameJob, saveJob, type CompactionJob } from './compaction-job.js';
import { CONTEXT_COMPRESSOR_IMAGE, stageObjectName } from './compressor-image.js';
import { buildStageGoal } from './stage-goal.js';
import { EMPTY_SUMMARY, validateSummary } from './summary.js';

export const compactInput = z.object({
  target_tokens: z
    .number()
    .int()
    .min(256)
    .max(64_000)
    .default(4000)
    .describe('256..64000: the no-op threshold and the summary goal, not a hard limit'),
  preserve_recent_entries: z.number().int().min(0).max(128).default(8).describe('0..128: entries kept verbatim at the end'),
  max_chunks: z.number().int().min(1).max(64).default(8).describe('1..64: most sequential summary stages (one child each)'),
  force: z.boolean().default(false).describe('bypasses only the under-target no-op'),
  _resume_job: z.record(z.string(), z.unknown()).optional(),
});

const output = z.object({
  compacted: z.boolean(),
  reason: z.enum(['compacted', 'context_under_target']),
  context_oid: z.string(),
  old_version: z.number().int(),
  new_version: z.number().int(),
  compressor_pids: z.array(z.string()),
  source_tokens: z.number().int(),
  compacted_tokens: z.number().int(),
  preserved_recent_entries: z.number().int(),
});

type Args = z.output<typeof compactInput>;

const services = (ctx: ToolContext) => ({
  objects: ctx.service<ObjectsService>(SERVICE_NAMES.objects),
  contexts: ctx.service<LlmContextService>(SERVICE_NAMES.llmContext),
  processes: ctx.service<ProcessService>(SERVICE_NAMES.processes),
});

/** `version_conflict` for a context that moved since the job read it: the job fails and nothing is written. */
const changedDuringCompaction = (job: CompactionJob, found: string) =>
  new LibosError(
    'version_conflict',
    `LLM context changed during compaction: expected version ${job.source_version} of ${job.context_oid}, found ${found}`,
    {
      details: { context_oid: job.context_oid, expected_version: job.source_version, found },
    },
  );

/**
 * A resumed call carries the job it saved with its wait. It is accepted only on the runtime's own resumption of that
 * wait: the call re-runs from its durable saved row (`ctx.resumed`), parked on this job's current child, for the
 * job's own caller, and equal to the job Object when that Object's payload survived. Anything else is refused.
 */
async function authorizeResume(ctx: ToolContext, raw: unknown): Promise<CompactionJob> {
  const wait = ctx.resumedWait;
  if (!ctx.resumed || wait?.kind !== 'child') {
    throw new LibosError(
      'invalid_arguments',
      '_resume_job: not callable directly; the runtime alone passes it when it resumes a compaction stage',
      {
        details: { field: '_resume_job' },
      },
    );
  }
  const job = asJob(raw, '_resume_job');
  if (job.caller_pid !== ctx.pid || job.current_child_pid !== wait.child_pid || job.status !== 'active') {
    throw new LibosError(
      'invalid_arguments',
      `_resume_job: does not match the saved compaction wait of ${ctx.pid} (on child ${wait.child_pid})`,
      {
        details: { field: '_resume_job' },
      },
    );
  }
  const stored = await loadJob(ctx, ctx.pid);
  if (stored && !sameJob(stored.job, job)) {
    throw new LibosError('invalid_arguments', `_resume_job: differs from the job Object of ${ctx.pid}; refusing to resume from it`, {
      details: { field: '_resume_job' },
    });
  }
  return job;
}

/** The context Object by name, with read, write and materialize checked; null when it has no live payload. */
async function loadContext(
  ctx: ToolContext,
): Promise<{ oid: string; version: number; payload: Record<string, unknown>; labels: DataLabels } | null> {
  const { objects, contexts } = services(ctx);
  const name = contexts.objectName(ctx.pid);
  const ref = await objects.lookup(namespaces.process(ctx.pid), name);
  const d = ref ? await objects.describe(ref.oid) : null;
  if (!d?.payloadAvailable) return null;
  for (const right of ['read', 'write', 'materialize'] as const) {
    await ctx.authority.require(resources.object(d.oid), right, {
      code: 'object_denied',
      message: `${name}: compaction needs read, write and materialize on ${d.oid}; ${right} is not held`,
    });
  }
  const payload = (await objects.readPayload(d.oid)) as Record<string, unknown> | null;
  if (payload === null || typeof payload !== 'object' || payload.kind !== 'llm_context' || !Array.isArray(payload.entries)) {
    throw new LibosError('invalid_state', `${name} (${d.oid}) does not hold an llm_context payload`, { details: { oid: d.oid } });
  }
  return { oid: d.oid, version: d.version, payload, labels: d.labels };
}

/** The stored arguments a stage's wait resumes with. */
const resumeArgs = (job: CompactionJob) => ({
  target_tokens: job.target_tokens,
  preserve_recent_entries: job.preserve_recent_entries,
  max_chunks: job.max_chunks,
  force: job.force,
  _resume_job: job as unknown as Record<string, unknown>,
});

/**
 * `compact_process_context`: replaces the caller's LLM context Object with one summary entry plus its newest
 * entries, the summary written by one `context-compressor:v0` child per chunk (each rolling the last one's summary
 * forward), then a compare-and-swap on the context's version that also moves its generation. An unforced call on a
 * context at or under `target_tokens` is a no-op needing only the context rights. While a stage's child runs the
 * caller waits on it; the runtime resumes the call from its durable saved wait (never the model).
 */
export const compactProcessContext = defineTool({
  name: 'compact_process_context',
  description:
    'Compact your LLM context Object (only with the "LLM context object:" heading in your prompt): one context-compressor:v0 ' +
    'child per chunk summarizes it; the context becomes the summary plus your newest entries. Call it alone; you wait while ' +
    'children run. Unforced and at or under target_tokens: compacted=false, reason "context_under_target".',
  input: compactInput,
  output,
  exclusive: true,
  hiddenInputs: ['_resume_job'],
  async run(args, ctx) {
    const resumed = args._resume_job !== undefined ? await authorizeResume(ctx, args._resume_job) : null;
    return compact(ctx, args, resumed);
  },
});

async function compact(ctx: ToolContext, args: Args, resumed: CompactionJob | null) {
  const { contexts } = services(ctx);
  const context = await loadContext(ctx);
  if (!context && !resumed) {
    const name = contexts.objectName(ctx.pid);
    throw new LibosError(
      'object_not_found',
      `${name}: this process has no LLM context Object (its prompt has no "LLM context object:" heading); there is nothing to compact`,
      {
        details: { name },
      },
    );
  }
  const sourceTokens = context ? contexts.estimateTokens(contexts.render(context.payload)) : resumed!.source_tokens;
  let job = resumed ?? (await loadJob(ctx, ctx.pid))?.job ?? null;
  if (job && job.status !== 'active') job = null;
  if (!job) {
    if (!args.force && sourceTokens <= args.target_tokens) {
      return {
        compacted: false,
        reason: 'context_under_target' as const,
        context_oid: context!.oid,
        old_version: context!.version,
        new_version: context!.version,
        compressor_pids: [],
        source_tokens: sourceTokens,
        compacted_tokens: sourceTokens,
        preserved_recent_entries: 0,
      };
    }
    await ctx.authority.require(`object_namespace:process:${ctx.pid}`, 'write', { code: 'namespace_denied' });
    const at = ctx.clock.now().toISOString();
    const source = structuredClone(context!.payload) as CompactionJob['source_payload'];
    job = {
      kind: 'context_compaction_job',
      schema_version: 1,
      status: 'active',
      caller_pid: ctx.pid,
      context_oid: context!.oid,
      source_version: context!.version,
      source_payload: source,
      source_tokens: sourceTokens,
      target_tokens: args.target_tokens,
      preserve_recent_entries: args.preserve_recent_entries,
      max_chunks: args.max_chunks,
      force: args.force,
      stage_index: 0,
      total_stages: chunkEntries(source.entries, args.max_chunks).length,
      current_child_pid: null,
      compressor_pids: [],
      discarded_compressor_pids: [],
      summaries: [],
      created_at: at,
      updated_at: at,
    };
    await saveJob(ctx, job);
    await ctx.audit.record({
      action: 'context.compaction_started',
      target: resources.object(job.context_oid),
      decision: 'active',
      details: {
        pid: ctx.pid,
        source_version: job.source_version,
        source_tokens: sourceTokens,
        total_stages: job.total_stages,
        force: job.force,
      },
    });
  }
  // From here on a failure fails the job, in the transaction that records the call's failure.
  let current: CompactionJob = job;
  ctx.onFailure?.(async (scope, error) => failJob(scope, current, error));

  if (context && (context.oid !== current.context_oid || context.version !== current.source_version)) {
    throw changedDuringCompaction(
      current,
      context.oid === current.context_oid ? `version ${context.version}` : `a new context Object ${context.oid}`,
    );
  }
  const chunks = chunkEntries(current.source_payload.entries, current.max_chunks);
  while (current.stage_index < current.total_stages) {
    if (current.current_child_pid === null) {
      current = await spawnStage(ctx, current, chunks, context?.labels ?? null);
      ctx.wait({ kind: 'child', child_pid: current.current_child_pid! }, { resumeArgs: resumeArgs(current) });
    }
    current = await collectStage(ctx, current);
    if (current.current_child_pid !== null)
      ctx.wait({ kind: 'child', child_pid: current.current_child_pid }, { resumeArgs: resumeArgs(current) });
  }
  return writeBack(ctx, current, (j) => (current = j));
}

/** Checks the stage's authority and budget, spawns its compressor, and records its pid in the job first. */
async function spawnStage(
  ctx: ToolContext,
  job: CompactionJob,
  chunks: readonly unknown[][],
  contextLabels: DataLabels | null,
): Promise<CompactionJob> {
  const { objects, processes, contexts } = services(ctx);
  await ctx.authority.require('process:spawn', 'write');
  const me = await processes.get(ctx.pid);
  if (me.imageId !== CONTEXT_COMPRESSOR_IMAGE) await ctx.authority.require(resources.image(CONTEXT_COMPRESSOR_IMAGE), 'read');
  const remaining = (await ctx.budgets.remaining(ctx.pid)).child_processes;
  const needed = job.total_stages - job.stage_index;
  if (remaining !== null && remaining !== undefined && remaining < needed) {
    throw new LibosError(
      'resource_limit_exceeded',
      `exhausted child process budget: compaction needs ${needed} more context-compressor:v0 children, ${remaining} remain`,
      {
        details: { needed, remaining },
      },
    );
  }
  const state = await contexts.state(ctx.pid);
  const labels = joinLabels([await ctx.flow.labels(), state.labels, ...(contextLabels ? [contextLabels] : [])]);
  const stage = job.stage_index + 1;
  const goal =
    `Compress stage ${stage} of ${job.total_stages} of the LLM context of ${ctx.pid}: read the Object ` +
    'context_compaction_stage:<your pid> in your memory and exit with its ten-key summary as payload.';
  const child = await processes.spawnChild(ctx.pid, { image: CONTEXT_COMPRESSOR_IMAGE, goal, labels });
  const next: CompactionJob = { ...job, current_child_pid: child.pid, compressor_pids: [...job.compressor_pids, child.pid] };
  await objects.createForProcess(child.pid, {
    type: 'goal',
    name: stageObjectName(child.pid),
    payload: buildStageGoal(next, chunks),
    immutable: true,
    labels,
    metadata: { title: `context compaction stage ${stage} of ${job.total_stages}` },
  });
  await saveJob(ctx, next);
  await ctx.events.emit('context_compaction_stage', {
    pid: ctx.pid,
    child_pid: child.pid,
    stage_index: stage,
    total_stages: job.total_stages,
  });
  return next;
}

/**
 * The current stage's child: still live (wait on), ended without a result (the job fails), or exited with a summary
 * (validated and rolled forward). A summary that vanished with a reopen is taken from the child's recorded exit
 * call when full I/O kept it; else the child is discarded and its stage runs again.
 */
async function collectStage(ctx: ToolContext, job: CompactionJob): Promise<CompactionJob> {
  const { objects, processes } = services(ctx);
  const childPid = job.current_child_pid!;
  const child = await processes.get(childPid);
  if (!isTerminalProcessStatus(child.status)) return job;
  const resultOid = typeof child.outcome?.result_oid === 'string' ? child.outcome.result_oid : null;
  if (child.status !== 'exited' || resultOid === null) {
    throw new LibosError('invalid_state', `context compressor child ended without a result: ${childPid} status=${child.status}`, {
      details: { child_pid: childPid, status: child.status },
    });
  }
  const result = await objects.describe(resultOid);
  let summary: unknown;
  if (result?.payloadAvailable) {
    summary = await objects.readPayload(resultOid);
    await ctx.flow.taint(result.labels, [resultOid]);
  } else {
    const recorded = await processes.recordedExitPayload(childPid);
    if (!recorded.found) {
      await ctx.audit.record({
        action: 'context.compressor_discarded',
        target: resources.process(childPid),
        decision: 'result_unavailable',
        details: { pid: ctx.pid, stage_index: job.stage_index + 1 },
      });
      return { ...job, current_child_pid: null, discarded_compressor_pids: [...job.discarded_compressor_pids, childPid] };
    }
    summary = recorded.payload;
  }
  const valid = validateSummary(summary, childPid);
  return { ...job, summaries: [valid], stage_index: job.stage_index + 1, current_child_pid: null };
}

/** The summary entry plus the preserved tail, written by compare-and-swap; the job completes in the same transaction. */
async function writeBack(ctx: ToolContext, job: CompactionJob, track: (j: CompactionJob) => void) {
  const { contexts } = services(ctx);
  const at = ctx.clock.now().toISOString();
  const entries = job.source_payload.entries;
  const preserved = Math.min(job.preserve_recent_entries, entries.length);
  const tail = entries.slice(entries.length - preserved);
  const summary = job.summaries[job.summaries.length - 1] ?? EMPTY_SUMMARY;
  const {
    process: _process,
    capabilities: _capabilities,
    tools: _tools,
    ...kept
  } = (job.source_payload.captured ?? {}) as Record<string, unknown>;
  const compactEntry = {
    kind: 'context_compacted',
    at,
    source_oid: job.context_oid,
    source_version: job.source_version,
    source_entry_count: entries.length,
    source_tokens: job.source_tokens,
    target_tokens: job.target_tokens,
    compaction_method: 'agent_image_child',
    compaction_metadata: {
      tool_name: 'compact_process_context',
      compressor_image_id: CONTEXT_COMPRESSOR_IMAGE,
      stage_count: job.total_stages,
      chunk_count: job.total_stages,
      requested_max_chunks: job.max_chunks,
      discarded_compressor_pids: job.discarded_compressor_pids,
    },
    compressor_pids: job.compressor_pids,
    summary,
    preserved_recent_entries: preserved,
    compacted_tokens: 0,
  };
  const build = (tokens: number) => ({
    ...job.source_payload,
    cache_strategy: { mode: 'compacted_stable_prefix', compacted_at: at },
    // The snapshot signatures are reset, so the next quantum re-baselines the process, its grants and its tools. The
    // events and MemoryView roots already summarized stay covered: re-rendering every view root would refill the
    // window at once. (They stay readable with read_memory_object.)
    captured: kept,
    entries: [{ ...compactEntry, compacted_tokens: tokens }, ...tail],
  });
  let tokens = contexts.estimateTokens(contexts.render(build(0)));
  for (let i = 0; i < 3; i++) {
    const again = contexts.estimateTokens(contexts.render(build(tokens)));
    if (again === tokens) break;
    tokens = again;
  }
  const written = await contexts.writeCompacted({
    pid: ctx.pid,
    contextOid: job.context_oid,
    sourceVersion: job.source_version,
    sourcePayload: job.source_payload,
    payload: build(tokens),
    labels: await ctx.flow.labels(),
    tags: ['compacted', 'compaction_method:agent_image_child'],
  });
  const result = {
    compacted: true,
    reason: 'compacted' as const,
    context_oid: written.oid,
    old_version: job.source_version,
    new_version: written.version,
    compressor_pids: [...job.compressor_pids],
    source_tokens: job.source_tokens,
    compacted_tokens: tokens,
    preserved_recent_entries: preserved,
  };
  try {
    const done: CompactionJob = { ...job, status: 'completed', result: { ...result, generation: written.generation } };
    track(done);
    await saveJob(ctx, done);
    await ctx.events.emit('context_compacted', {
      pid: ctx.pid,
      context_oid: written.oid,
      old_version: result.old_version,
      new_version: written.version,
      generation: written.generation,
    });
    await ctx.audit.record({
      action: 'context.compacted',
      target: resources.object(written.oid),
      decision: 'compacted',
      details: { ...result, generation: written.generation, recreated: written.recreated },
    });
  } catch (err) {
    // In one store transaction a failure after the compare-and-swap takes the write back with it: settlement is known.
    const e = LibosError.from(err);
    throw new LibosError(e.code, `${e.message} (after the context write, which was rolled back with the call: the context is unchanged)`, {
      details: { ...(e.details ?? {}), settlement: 'rolled_back' },
      cause: err,
    });
  }
  return result;
}
