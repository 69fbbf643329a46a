// Long file: one quantum, step by step (prompt, model call, batch, results, waits); the steps share its state.
import { canonicalJson, joinLabels, LibosError, resources, type DataLabels } from '@libos/sdk';
import { callTool } from '../broker/tool-broker.js';
import type { ToolCallResult } from '../broker/tool-result.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { LlmMessage, LlmProvider, LlmResponse, LlmRetry, LlmToolCall } from '../llm/provider.js';
import type { Delivery, UnreadSummary } from '../mailbox/messages.js';
import { unreadByDelivery } from '../mailbox/unread-mail.js';
import { endProcess } from '../processes/exit.js';
import { claimPendingAction, findPendingAction, type PendingAction } from '../processes/pending-actions.js';
import { TERMINAL_PROCESS_STATUSES, type ProcessInfo, type ProcessStatus } from '../processes/process-record.js';
import { findProcess } from '../processes/process-store.js';
import { findRunner, type RunnerRecord } from '../processes/runners.js';
import { transition } from '../processes/transition.js';
import { clearSinkDurably } from '../sinks/clear-sink.js';
import { inTransaction } from '../store/transaction.js';
import { isAppendFailure } from '../store/append-buffer.js';
import { inDepsUnit } from '../store/unit-of-work.js';
import { traceModelCall } from '../telemetry/gen-ai-spans.js';
import type { LlmProfile } from '../config/host-config.js';
import { recordLlmCall, totalTokens } from './llm-calls.js';
import { maintainContext, viewTokenBudgetFor } from '../context/context-maintenance.js';
import { renderPrompt, type RenderedPrompt } from './render-prompt.js';
import { DROPPED_BY_SINGLE_CALL, keepLastValidCall, parallelToolCallsOf } from './single-call.js';
import { callStopReason, stopAftermath, type StopReason } from './stop-reason.js';

export type { StopReason } from './stop-reason.js';

export interface QuantumResult {
  readonly pid: string;
  /**
   * `resumed`: a saved call re-ran without a model call; `turn`: one model turn; `skipped`: not runnable; `paused`:
   * the model provider failed (after its own retries), so the process was paused with `error` (a resume runs it again).
   */
  readonly kind: 'resumed' | 'turn' | 'skipped' | 'failed' | 'paused';
  /** Why a `paused` quantum paused its process: the provider's error. */
  readonly error?: { readonly code: string; readonly message: string };
  readonly stopReason?: StopReason;
  readonly executed: readonly string[];
  readonly skipped: readonly string[];
  readonly results: readonly ToolCallResult[];
}

export interface QuantumOptions {
  readonly provider: LlmProvider;
  /** Store full prompts and replies in llm_calls (default true). */
  readonly persistFullIo?: boolean;
  /** Consecutive empty replies after which a process fails (default 3). */
  readonly maxEmptyReplies?: number;
  /** Per-pid counters the scheduler keeps across quanta. */
  readonly emptyReplies?: Map<string, number>;
  /** Consecutive model turns in which every call was refused, after which a process fails (default 8). */
  readonly maxStalledTurns?: number;
  readonly stalledTurns?: Map<string, number>;
  /**
   * The host config's LLM profile the run uses (`libos run --profile`): its `parallel_tool_calls` is sent to the
   * provider, and when it is false only the last valid call of a reply runs. Without a profile a batch runs in order.
   */
  readonly profile?: LlmProfile | null;
  /** Aborting it cancels the model call in flight (its process is then paused, as after any provider failure). */
  readonly signal?: AbortSignal;
}

/** Turns in a row whose every call was refused before a process is failed for making no progress. */
export const DEFAULT_MAX_STALLED_TURNS = 8;

/** Provider attempts per turn: a reply naming a tool the process cannot see gets one corrective retry. */
export const MAX_ATTEMPTS = 2;

const iso = (deps: KernelDeps) => deps.clock.now().toISOString();

async function failProcess(deps: KernelDeps, pid: string, code: string, message: string): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (!p || TERMINAL_PROCESS_STATUSES.has(p.status)) return;
    await endProcess(deps, scope, pid, { kind: 'failed', code, message: message.slice(0, 2000) });
  });
}

/** Errors the provider threw (not the executor's own): they pause the process instead of failing it. */
const providerFailures = new WeakSet<object>();

/**
 * The model provider failed after its own bounded retries (unreachable, timing out, an error reply, cancelled): the
 * process did nothing wrong, so it is paused with the error (audit `llm.provider_failed`, event `process_paused`)
 * rather than failed; a resume runs it again.
 */
async function pauseForProvider(deps: KernelDeps, pid: string, provider: LlmProvider, e: LibosError): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (p?.status !== 'running') return;
    const reason = `model provider failed: ${e.code}: ${e.message}`.slice(0, 2000);
    await transition(scope.store, pid, { from: ['running'], to: 'paused', wait: { kind: 'paused', reason } }, iso(deps));
    const error = { code: e.code, message: e.message.slice(0, 2000) };
    await scope.audit.record({
      action: 'llm.provider_failed',
      target: resources.process(pid),
      decision: 'paused',
      details: { pid, provider: provider.name, model: provider.model, error },
    });
    await scope.events.emit('process_paused', { pid, reason, error });
  });
}

/** A provider's retry as a durable `llm_retry` event of the pid (the progress a host shows while it waits). */
async function recordRetry(deps: KernelDeps, pid: string, provider: LlmProvider, retry: LlmRetry): Promise<void> {
  await inTransaction(deps.db, deps.scopes, pid, null, (scope) =>
    scope.events.emit('llm_retry', {
      pid,
      provider: provider.name,
      model: provider.model,
      ...retry,
      error: { code: retry.error.code, message: retry.error.message.slice(0, 500) },
    }),
  );
}

/**
 * An error thrown after a saved call was claimed (pending → resuming) leaves its settlement unknown: the process
 * fails closed with the audit `llm.pending_action_resume_interrupted`, and the call is never replayed. (A resumed
 * call that merely fails is an ordinary tool failure: the broker returns it and settles the saved call.)
 */
async function failInterruptedResume(
  deps: KernelDeps,
  pid: string,
  call: { readonly tool: string; readonly callId: string },
  e: LibosError,
): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (!p || TERMINAL_PROCESS_STATUSES.has(p.status)) return;
    await scope.audit.record({
      action: 'llm.pending_action_resume_interrupted',
      target: resources.process(pid),
      decision: 'failed',
      details: { pid, tool: call.tool, call_id: call.callId, error: e.toJSON() },
    });
    await endProcess(deps, scope, pid, {
      kind: 'failed',
      code: 'pending_action_resume_interrupted',
      message: `${call.tool} failed to resume (${e.code}: ${e.message})`.slice(0, 2000),
    });
  });
}

async function killForBudget(deps: KernelDeps, pids: readonly string[], message: string): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    for (const pid of pids) {
      const p = await findProcess(scope.store, pid);
      if (p && !TERMINAL_PROCESS_STATUSES.has(p.status))
        await endProcess(deps, scope, pid, { kind: 'killed', code: 'resource_limit_exceeded', reason: message.slice(0, 2000) });
    }
  });
}

/** The pid's status now (a narrow read: only the status column). */
async function statusOf(deps: KernelDeps, pid: string): Promise<ProcessStatus> {
  const r = await findProcess(deps.db, pid);
  if (!r) throw new LibosError('process_not_found', `process ${pid} does not exist`, { details: { pid } });
  return r.status;
}

/**
 * Runs a model's batch in order, stopping at the first wait, failure, notice, terminal state or exclusive call. With
 * parallel tool calls off (the run's profile) only the reply's last valid call runs; the others are dropped.
 */
async function dispatchBatch(
  deps: KernelDeps,
  pid: string,
  reply: readonly LlmToolCall[],
  opts: QuantumOptions,
): Promise<Omit<QuantumResult, 'pid' | 'kind'>> {
  const { kept: calls, dropped } = parallelToolCallsOf(opts) ? { kept: reply, dropped: [] } : keepLastValidCall(deps, reply);
  const executed: string[] = [];
  const results: ToolCallResult[] = [];
  let stop: StopReason = 'completed';
  let i = 0;
  const remaining = await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => deps.engine.budgets(scope).remaining(pid));
  if (remaining.tool_calls !== null && remaining.tool_calls !== undefined && remaining.tool_calls < calls.length) {
    stop = 'resource_limit_exceeded';
    i = 0;
  } else {
    for (; i < calls.length; i++) {
      const call = calls[i]!;
      const r = call.argumentsError
        ? await callTool(
            deps,
            pid,
            call.name,
            { __unparsable_arguments__: call.rawArguments ?? null },
            { rejectArguments: call.argumentsError },
          )
        : await callTool(deps, pid, call.name, call.arguments, { origin: { kind: 'model' } });
      executed.push(call.name);
      results.push(r);
      const s = callStopReason(r);
      if (TERMINAL_PROCESS_STATUSES.has(await statusOf(deps, pid))) stop = 'process_terminal';
      else if (s) stop = s;
      else if (deps.registry.tools.get(call.name)?.tool.exclusive && i < calls.length - 1) stop = 'exclusive';
      if (stop !== 'completed') {
        i++;
        break;
      }
    }
  }
  const skipped = calls.slice(i).map((c) => c.name);
  const lastExclusive = deps.registry.tools.get(executed[executed.length - 1] ?? '')?.tool.exclusive;
  const skippedReason = skipped.length === 0 ? null : lastExclusive ? 'skipped_after_exclusive' : `stopped_by_${stop}`;
  const droppedNames = dropped.map((c) => c.name);
  const details = {
    requested: reply.map((c) => c.name),
    executed,
    skipped,
    stop_reason: stop,
    skipped_reason: skippedReason,
    ...(droppedNames.length ? { dropped: droppedNames, dropped_reason: DROPPED_BY_SINGLE_CALL } : {}),
  };
  await inTransaction(deps.db, deps.scopes, pid, null, (scope) =>
    scope.audit.record({ action: 'llm.action_batch', target: resources.process(pid), decision: stop, details }),
  );
  return { stopReason: stop, executed, skipped: [...droppedNames, ...skipped], results };
}

/**
 * Post-charges a reply's tokens to the pid and every ancestor, with overage: the charge always commits (the
 * completion happened), and a budget it overran kills the subtree the budget engine names; nothing is dispatched.
 * Under a token budget (the pid's or an ancestor's) usage must be trustworthy: a reply without a total (and without
 * prompt + completion to sum), or whose total is below prompt + completion, fails closed, charged at the larger count.
 */
async function chargeTokens(deps: KernelDeps, pid: string, r: LlmResponse, tokens: number | null): Promise<void> {
  const remaining = await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => deps.engine.budgets(scope).remaining(pid));
  const budgeted = remaining.llm_total_tokens !== null && remaining.llm_total_tokens !== undefined;
  const { prompt_tokens: p, completion_tokens: c } = r.usage;
  const parts = p !== null && c !== null ? p + c : null;
  const inconsistent = tokens !== null && parts !== null && tokens < parts;
  const charged = inconsistent ? parts : tokens;
  let killPids: readonly string[] = [];
  if (charged !== null) {
    const outcome = await inTransaction(deps.db, deps.scopes, pid, null, (scope) =>
      deps.engine.budgets(scope).chargeOverage(pid, { llm_total_tokens: charged }),
    );
    killPids = outcome.killPids;
  }
  if (budgeted && tokens === null)
    throw new LibosError('resource_limit_exceeded', `the provider reported no token usage while ${pid} has a token budget; failing closed`);
  if (budgeted && inconsistent)
    throw new LibosError(
      'resource_limit_exceeded',
      `the provider reported inconsistent token usage (total ${tokens} < prompt ${p} + completion ${c}) while ` +
        `${pid} has a token budget; failing closed`,
    );
  if (killPids.length > 0)
    throw new LibosError(
      'resource_limit_exceeded',
      `llm_total_tokens: the reply's ${charged} tokens overran a token budget; nothing is dispatched`,
      { details: { killPids } },
    );
}

/**
 * Sink clearance before a prompt leaves the runtime: the labels of everything the prompt carries (the process's
 * flow high-water joined with its materialized view) must fit the sink's rule; otherwise nothing is sent, the
 * provider is never called, and the quantum fails with `egress_denied`. A cleared prompt is then observed: what the
 * model writes next derives from the view, so a view above the high-water raises it (no view source is listed).
 */
async function clearPrompt(deps: KernelDeps, pid: string, sink: string, viewLabels: DataLabels): Promise<void> {
  const flow = await inTransaction(deps.db, deps.scopes, pid, null, (scope) => deps.engine.flow(scope, pid).labels());
  const labels = joinLabels([flow, viewLabels]);
  await clearSinkDurably(deps, pid, sink, { labels, field: 'prompt' });
  if (canonicalJson(labels) === canonicalJson(flow)) return;
  await inTransaction(deps.db, deps.scopes, pid, null, (scope) => deps.engine.flow(scope, pid).taint(viewLabels));
}

/** What a model turn sends, kept across its attempts (a corrective retry appends to `messages`). */
interface ModelRequest {
  readonly turn: ModelTurn;
  readonly prompt: RenderedPrompt;
  readonly messages: LlmMessage[];
  readonly attempt: number;
  /** The input tokens maintenance estimated for `prompt` (null without a profile); recorded on the first attempt's row. */
  readonly inputEstimate: number | null;
}

/**
 * Before the model call, in the quantum's first unit of work: the prompt is rendered and cleared for the provider's
 * sink, and the first attempt is charged.
 */
async function prepareModelCall(deps: KernelDeps, turn: ModelTurn, opts: QuantumOptions): Promise<QuantumStep> {
  const viewTokenBudget = viewTokenBudgetFor(opts.profile, deps.registry.images.get(turn.process.imageId));
  const rendered = await renderPrompt(deps, turn.process, turn.unread, viewTokenBudget !== undefined ? { viewTokenBudget } : {});
  // Context maintenance may end the quantum with its own call (a compaction that waits) instead of a model call.
  const maintained = await maintainContext(deps, turn.process, rendered, { profile: opts.profile ?? null, model: opts.provider.model });
  if (maintained.kind === 'dispatched') {
    const { pid } = turn.process;
    const result = {
      pid,
      kind: 'turn',
      stopReason: maintained.stopReason,
      executed: [maintained.tool],
      skipped: [],
      results: [maintained.result],
    } as const;
    return { kind: 'done', result };
  }
  const prompt = maintained.prompt;
  await clearPrompt(deps, turn.process.pid, `llm:${opts.provider.name}`, prompt.labels);
  const inputEstimate = maintained.pressure?.input ?? null;
  const request: ModelRequest = { turn, prompt, messages: [...prompt.messages], attempt: 1, inputEstimate };
  await chargeAttempt(deps, request);
  return { kind: 'ask', request };
}

/**
 * One llm call and the context it is sent (≈ chars / 4, as rendered) are charged before it is made; an exhausted
 * llm_calls or context_total_tokens budget kills the process and the provider is never called.
 */
async function chargeAttempt(deps: KernelDeps, req: ModelRequest): Promise<void> {
  const { prompt, messages } = req;
  const extra = messages.slice(prompt.messages.length).reduce((n, m) => n + m.content.length, 0);
  const contextTokens = req.attempt === 1 ? prompt.tokens : prompt.tokens + Math.ceil(extra / 4);
  const pid = req.turn.process.pid;
  await inTransaction(deps.db, deps.scopes, pid, null, (scope) =>
    deps.engine.budgets(scope).charge(pid, { llm_calls: 1, context_total_tokens: contextTokens }),
  );
}

/** The provider's answer to one attempt, got outside any transaction. */
interface ModelAnswer {
  readonly response: LlmResponse | null;
  readonly error: LibosError | null;
  readonly latencyMs: number;
}

async function callProvider(deps: KernelDeps, req: ModelRequest, opts: QuantumOptions): Promise<ModelAnswer> {
  const started = performance.now();
  try {
    // The provider gets its own copy: a corrective retry appends to `messages` after this attempt.
    const pid = req.turn.process.pid;
    const request = {
      messages: [...req.messages],
      tools: req.prompt.tools,
      parallelToolCalls: parallelToolCallsOf(opts),
      pid,
      imageId: req.turn.process.imageId,
      onRetry: (retry: LlmRetry) => recordRetry(deps, pid, opts.provider, retry),
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    const response = await opts.provider.completeAction(request);
    return { response, error: null, latencyMs: performance.now() - started };
  } catch (err) {
    return { response: null, error: LibosError.from(err), latencyMs: performance.now() - started };
  }
}

/**
 * After the model call, in the quantum's next unit of work: the call is recorded and its tokens charged. A reply
 * that names tools the process cannot see gets one corrective retry (the next attempt, charged here); otherwise the
 * reply is the turn's.
 */
async function takeAnswer(
  deps: KernelDeps,
  req: ModelRequest,
  answer: ModelAnswer,
  opts: QuantumOptions,
): Promise<LlmResponse | ModelRequest> {
  const p = req.turn.process;
  const pid = p.pid;
  const { response, error } = answer;
  const id = deps.ids.next('llm');
  const tokens = totalTokens(response);
  await inTransaction(deps.db, deps.scopes, pid, null, async (scope) => {
    await recordLlmCall(scope.store, {
      id,
      pid,
      imageId: p.imageId,
      provider: opts.provider.name,
      model: response?.model ?? opts.provider.model,
      request: { messages: req.messages, tools: req.prompt.tools, parallelToolCalls: parallelToolCallsOf(opts) },
      response,
      error: error ? `${error.code}: ${error.message}` : null,
      latencyMs: answer.latencyMs,
      createdAt: iso(deps),
      inputEstimateTokens: req.attempt === 1 ? req.inputEstimate : null,
      persistFullIo: opts.persistFullIo ?? true,
      seen: deps.seenTexts,
      ...(deps.committedTexts ? { committed: { texts: deps.committedTexts, afterCommit: (fn: () => void) => scope.afterCommit(fn) } } : {}),
    });
    await scope.events.emit('llm_call', { pid, llm_call_id: id, status: error ? 'error' : 'ok', total_tokens: tokens });
  });
  if (error) {
    providerFailures.add(error);
    throw error;
  }
  const r = response!;
  await chargeTokens(deps, pid, r, tokens);
  const visible = new Set(p.visibleTools);
  const unknown = r.toolCalls.filter((c) => !visible.has(c.name)).map((c) => c.name);
  if (unknown.length === 0) return r;
  if (req.attempt >= MAX_ATTEMPTS)
    throw new LibosError(
      'tool_not_in_process_table',
      `the model asked for tools it cannot see (${unknown.join(', ')}) in ${MAX_ATTEMPTS} attempts`,
    );
  const messages = [
    ...req.messages,
    {
      role: 'user' as const,
      content: `These tools are not available to you: ${unknown.join(', ')}. Call only these: ${[...visible].sort().join(', ')}.`,
    },
  ];
  const next: ModelRequest = { ...req, messages, attempt: req.attempt + 1 };
  await chargeAttempt(deps, next);
  return next;
}

/** A turn that re-dispatches the pid's saved call without a model call (a runner's, or a model's parked call). */
interface ResumeTurn {
  readonly kind: 'resume';
  readonly process: ProcessInfo;
  readonly saved: PendingAction;
  /** False when the saved call was not `pending` (another worker holds it). */
  readonly claimed: boolean;
  readonly runner: RunnerRecord | null;
}

/** A turn that asks the model: the unread mail its prompt restates was read with the claim. */
interface ModelTurn {
  readonly kind: 'model';
  readonly process: ProcessInfo;
  readonly unread: Readonly<Record<Delivery, UnreadSummary>>;
}

/** A runner that holds no saved call: it never asks a model, so the quantum fails it. */
interface EmptyRunnerTurn {
  readonly kind: 'empty_runner';
  readonly process: ProcessInfo;
}

/** What a quantum reads once, in the transaction that claims its pid (runnable → running). */
type Turn = ResumeTurn | ModelTurn | EmptyRunnerTurn;

const SKIP_CODES: ReadonlySet<string> = new Set(['invalid_state', 'conflict', 'process_not_found']);

/** Claims the pid and reads its Turn in one transaction; null when it is not runnable (another worker, an end). */
async function claimTurn(deps: KernelDeps, pid: string): Promise<Turn | null> {
  return inTransaction(deps.db, deps.scopes, 'host', null, async (scope): Promise<Turn | null> => {
    let process: ProcessInfo;
    try {
      process = await transition(scope.store, pid, { from: ['runnable'], to: 'running' }, iso(deps));
    } catch (err) {
      if (err instanceof LibosError && SKIP_CODES.has(err.code)) return null;
      throw err;
    }
    const saved = await findPendingAction(scope.store, pid);
    // A runner (an ObjectTask) only ever resumes its one saved call: it never asks a model.
    const runner = await findRunner(scope.store, pid);
    if (saved) {
      const claimed = await claimPendingAction(scope.store, pid, saved.resumeToken, iso(deps));
      return { kind: 'resume', process, saved, runner, claimed };
    }
    if (runner) return { kind: 'empty_runner', process };
    return { kind: 'model', process, unread: await unreadByDelivery(scope.store, pid) };
  });
}

/** Re-dispatches the saved call through the broker: a runner's settles with its observer, a model's publishes its result. */
async function resumeSaved(deps: KernelDeps, turn: ResumeTurn): Promise<QuantumResult> {
  const { pid } = turn.process;
  const { saved } = turn;
  // A runner's call saved at its birth (`{kind:'tool'}`) has never run: it runs as a first call.
  const wait = saved.wait.kind === 'tool' ? null : saved.wait;
  const resume = { token: saved.resumeToken, callId: saved.callId, firstRun: wait === null, ...(wait ? { wait } : {}) };
  const origin = turn.runner ? { kind: 'runner' as const, runner: turn.runner } : { kind: 'model' as const };
  const r = await callTool(deps, pid, saved.tool, saved.args, { resume, origin });
  const ended = TERMINAL_PROCESS_STATUSES.has(await statusOf(deps, pid));
  const stopReason: StopReason = ended ? 'process_terminal' : (callStopReason(r) ?? 'completed');
  return { pid, kind: 'resumed', stopReason, executed: [saved.tool], skipped: [], results: [r] };
}

/** The model's reply: its batch dispatched (or an empty reply counted). */
async function dispatchReply(deps: KernelDeps, pid: string, response: LlmResponse, opts: QuantumOptions): Promise<QuantumResult> {
  if (response.toolCalls.length === 0) {
    const n = (opts.emptyReplies?.get(pid) ?? 0) + 1;
    opts.emptyReplies?.set(pid, n);
    if (n >= (opts.maxEmptyReplies ?? 3))
      throw new LibosError('invalid_state', `the model replied without a tool call ${n} times in a row`);
    return { pid, kind: 'turn', stopReason: 'empty_reply', executed: [], skipped: [], results: [] };
  }
  opts.emptyReplies?.delete(pid);
  const result: QuantumResult = { pid, kind: 'turn', ...(await dispatchBatch(deps, pid, response.toolCalls, opts)) };
  // A model that only makes refused calls (bad arguments, unread interrupts, denials) makes no progress and
  // would spend model calls for ever: after maxStalledTurns such turns in a row the process fails.
  const progressed = result.results.some((r) => r.ok);
  const stalled = progressed ? 0 : (opts.stalledTurns?.get(pid) ?? 0) + 1;
  if (stalled === 0) opts.stalledTurns?.delete(pid);
  else opts.stalledTurns?.set(pid, stalled);
  const maxStalled = opts.maxStalledTurns ?? DEFAULT_MAX_STALLED_TURNS;
  if (stalled >= maxStalled) {
    const last = result.results.map((r) => (r.ok ? 'ok' : r.error.code)).join(', ');
    throw new LibosError(
      'invalid_state',
      `no progress: every call of ${pid}'s last ${stalled} model turns was refused (the last: ${last})`,
    );
  }
  return result;
}

/**
 * Where a quantum is between its units of work: asking the model (the provider is called outside any transaction),
 * dispatching the model's reply, re-dispatching a claimed saved call, or done.
 */
type QuantumStep =
  | { readonly kind: 'ask'; readonly request: ModelRequest }
  | { readonly kind: 'dispatch'; readonly response: LlmResponse }
  | { readonly kind: 'resume'; readonly turn: ResumeTurn }
  | { readonly kind: 'done'; readonly result: QuantumResult };

/** The quantum as it runs: its pid, when it started, and the saved call it re-dispatches (if any). */
interface QuantumRun {
  readonly pid: string;
  readonly startedAt: number;
  readonly provider: LlmProvider;
  resuming: { readonly tool: string; readonly callId: string } | null;
}

/**
 * One quantum for one pid: claim it (runnable → running) and read its Turn, then either resume its saved blocked call
 * without a model call, or run one model turn and dispatch the batch; then charge its wall time and hand it back
 * (running → runnable) unless the quantum parked or ended it. An exception inside the quantum fails the process, as
 * does a unit whose events and audit rows fail to be written at its COMMIT (K-9.27).
 *
 * Each phase is one unit of work (one commit), and each commits before anything the next one does can have an
 * effect outside the store: the claim (with a model turn's prompt and charge) before the model is called or a saved
 * call re-runs, so a crash never replays a call whose settlement is unknown; the model's reply (its llm_calls row and
 * token charge) before a batch that can act outside the store (a tool whose policy declares side effects) is
 * dispatched; then the batch (each call a savepoint) with the hand-back. A batch of store-only tools commits in the
 * reply's unit: a crash loses both or neither, and nothing outside the store happened in between. The model
 * call runs outside any transaction, so a slow provider never holds the store.
 */
export async function runQuantum(deps: KernelDeps, pid: string, opts: QuantumOptions): Promise<QuantumResult> {
  const run: QuantumRun = { pid, startedAt: deps.clock.now().getTime(), provider: opts.provider, resuming: null };
  try {
    return await quantumPhases(deps, run, opts);
  } catch (err) {
    if (!(err instanceof TreeLost)) throw err;
    // Another host took the tree over while this one was away (K-15.25): it recovered the quantum; nothing more here.
    process.emitWarning(`${err.message}; its quantum there was left to that host`, { type: 'LibosWarning', code: 'host_tree_lost' });
    return { pid, kind: 'skipped', executed: [], skipped: [], results: [] };
  }
}

/** A unit of a quantum found its tree's lease held by another host (K-15.25): the unit wrote nothing. */
class TreeLost extends Error {
  constructor(pid: string) {
    super(`the tree of ${pid} was taken over by another host`);
  }
}

async function quantumPhases(deps: KernelDeps, run: QuantumRun, opts: QuantumOptions): Promise<QuantumResult> {
  const { pid } = run;
  // One of many hosts: each unit locks the tree first (calls from other hosts wait for it) and goes on only while
  // this host holds the tree's lease (`TreeOwnership.hold`), so a host that lost the tree writes nothing more of it.
  const holding = (phase: (d: KernelDeps) => Promise<QuantumStep>) =>
    inDepsUnit(deps, async (d) => {
      if (d.trees && !(await d.trees.hold(d.db, pid))) throw new TreeLost(pid);
      return phase(d);
    });
  // A unit whose events and audit rows fail to be written at its COMMIT (K-9.27) rolled back whole; the quantum then
  // fails in a unit of its own (`failQuantum`), as `guarded` does for a failure inside the unit. A second failure throws.
  const unit = async (phase: (d: KernelDeps) => Promise<QuantumStep>) => {
    try {
      return await holding(phase);
    } catch (err) {
      if (!isAppendFailure(err)) throw err;
      return holding((d) => failQuantum(d, run, err));
    }
  };
  let step = await unit((d) => beginQuantum(d, run, opts));
  for (;;) {
    switch (step.kind) {
      case 'done':
        return step.result;
      case 'ask': {
        const request = step.request;
        const answer = await traceModelCall(opts.provider, request.turn.process, () => callProvider(deps, request, opts));
        step = await unit((d) =>
          guarded(d, run, async () => {
            const reply = await takeAnswer(d, request, answer, opts);
            if (!('toolCalls' in reply)) return { kind: 'ask', request: reply };
            // A batch that cannot act outside the store joins the reply's unit: one commit holds both.
            if (actsOutsideStore(d, reply)) return { kind: 'dispatch', response: reply };
            return { kind: 'done', result: await dispatchReply(d, pid, reply, opts) };
          }),
        );
        break;
      }
      case 'dispatch': {
        const response = step.response;
        step = await unit((d) => guarded(d, run, async () => ({ kind: 'done', result: await dispatchReply(d, pid, response, opts) })));
        break;
      }
      case 'resume': {
        const turn = step.turn;
        step = await unit((d) => guarded(d, run, async () => ({ kind: 'done', result: await resumeSaved(d, turn) })));
        break;
      }
    }
  }
}

/**
 * True when a call of the reply may act outside the store (its tool's `policy.sideEffects`): then the reply's unit
 * commits before the batch runs. Any other batch writes only the store, so it commits with the reply.
 */
function actsOutsideStore(deps: KernelDeps, reply: LlmResponse): boolean {
  return reply.toolCalls.some((c) => deps.registry.tools.get(c.name)?.tool.policy?.sideEffects === true);
}

/** The quantum's first unit: claim and read the Turn; then a saved call is due, or the model call is prepared. */
async function beginQuantum(deps: KernelDeps, run: QuantumRun, opts: QuantumOptions): Promise<QuantumStep> {
  const { pid } = run;
  const turn = await claimTurn(deps, pid);
  if (!turn) return { kind: 'done', result: { pid, kind: 'skipped', executed: [], skipped: [], results: [] } };
  return guarded(deps, run, async (): Promise<QuantumStep> => {
    switch (turn.kind) {
      case 'resume':
        if (!turn.claimed) throw new LibosError('conflict', `pending action of ${pid} was claimed by another worker`);
        run.resuming = { tool: turn.saved.tool, callId: turn.saved.callId };
        return { kind: 'resume', turn };
      case 'empty_runner':
        throw new LibosError('invalid_state', `runner ${pid} holds no saved call; a runner never asks a model`);
      case 'model':
        return prepareModelCall(deps, turn, opts);
    }
  });
}

/**
 * Runs a part of the quantum; when it ends the quantum (a result, or an exception that fails the process), the
 * quantum is closed in the same unit of work: its wall time charged, the process handed back.
 */
async function guarded(deps: KernelDeps, run: QuantumRun, body: () => Promise<QuantumStep>): Promise<QuantumStep> {
  let step: QuantumStep;
  try {
    step = await body();
  } catch (err) {
    return failQuantum(deps, run, err);
  }
  return step.kind === 'done' ? { kind: 'done', result: await closeQuantum(deps, run, step.result) } : step;
}

/**
 * What a quantum does when `err` ended it (in the unit that failed, or in a unit of its own when the failed one rolled
 * back whole, K-9.27): a resumed call fails closed, a provider failure pauses the process, a budget overrun kills
 * what it names, anything else fails the process; then the quantum closes.
 */
async function failQuantum(deps: KernelDeps, run: QuantumRun, err: unknown): Promise<QuantumStep> {
  const { pid } = run;
  const e = LibosError.from(err);
  const kill = e.code === 'resource_limit_exceeded' ? (e.details?.killPids as string[] | undefined) : undefined;
  const byProvider = typeof err === 'object' && err !== null && providerFailures.has(err);
  if (run.resuming) await failInterruptedResume(deps, pid, run.resuming, e);
  else if (byProvider) await pauseForProvider(deps, pid, run.provider, e);
  else if (e.code === 'resource_limit_exceeded') await killForBudget(deps, kill?.length ? kill : [pid], e.message);
  else await failProcess(deps, pid, e.code, e.message);
  const result: QuantumResult = byProvider
    ? { pid, kind: 'paused', error: { code: e.code, message: e.message }, executed: [], skipped: [], results: [] }
    : { pid, kind: 'failed', executed: [], skipped: [], results: [] };
  return { kind: 'done', result: await closeQuantum(deps, run, result) };
}

/**
 * A stop that parked or ended the process leaves nothing to hand back; any other (or a failed quantum) hands it back
 * if it is still running, in the transaction that charges the quantum's wall time (with overage).
 */
async function closeQuantum(deps: KernelDeps, run: QuantumRun, result: QuantumResult): Promise<QuantumResult> {
  const { pid } = run;
  const handBack = result.kind === 'failed' || result.stopReason === undefined || stopAftermath(result.stopReason) === 'hand_back';
  const seconds = Math.max(0, (deps.clock.now().getTime() - run.startedAt) / 1000);
  const over = await inTransaction(deps.db, deps.scopes, pid, null, async (scope) => {
    const row = await findProcess(scope.store, pid);
    if (!row || TERMINAL_PROCESS_STATUSES.has(row.status)) return null;
    const charged = await deps.engine.budgets(scope).chargeOverage(pid, { runtime_seconds: seconds });
    if (charged.exceeded || !handBack || row.status !== 'running') return charged;
    await transition(scope.store, pid, { from: ['running'], to: 'runnable' }, iso(deps));
    return charged;
  });
  if (!over?.exceeded) return result;
  // A process over its runtime budget is killed (it is never handed back first).
  await killForBudget(
    deps,
    over.killPids,
    `runtime_seconds: the quantum of ${pid} took ${seconds.toFixed(3)} s and went over a runtime budget`,
  );
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (p?.status === 'running') await transition(scope.store, pid, { from: ['running'], to: 'runnable' }, iso(deps));
  });
  return { ...result, kind: 'failed' };
}
