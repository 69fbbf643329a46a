import { canonicalJson, joinLabels, LibosError, type DataLabels } from '@libos/sdk';
import { callTool } from '../broker/tool-broker.js';
import type { ToolCallResult } from '../broker/tool-result.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { LlmProvider, LlmResponse, LlmToolCall } from '../llm/provider.js';
import { endProcess } from '../processes/exit.js';
import { claimPendingAction, findPendingAction } from '../processes/pending-actions.js';
import { TERMINAL_STATUSES } from '../processes/process-record.js';
import { findProcess, getProcess } from '../processes/process-store.js';
import { findRunner, runnerCallHooks } from '../processes/runners.js';
import { transition } from '../processes/transition.js';
import { clearSinkDurably } from '../sinks/clear-sink.js';
import { inTransaction } from '../store/transaction.js';
import { recordLlmCall, totalTokens } from './llm-calls.js';
import { renderPrompt } from './render-prompt.js';

/** Why a batch stopped (kernel spec §2). */
export type StopReason =
  | 'completed'
  | 'waiting_human'
  | 'waiting_child'
  | 'waiting_message'
  | 'waiting_task'
  | 'tool_failed'
  | 'message_notice'
  | 'interrupted_by_message'
  | 'process_terminal'
  | 'resource_limit_exceeded'
  | 'exclusive'
  | 'empty_reply';

export interface QuantumResult {
  readonly pid: string;
  /** `resumed`: a saved call re-ran without a model call; `turn`: one model turn; `skipped`: not runnable. */
  readonly kind: 'resumed' | 'turn' | 'skipped' | 'failed';
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
}

/** Turns in a row whose every call was refused before a process is failed for making no progress. */
export const DEFAULT_MAX_STALLED_TURNS = 8;

/** Provider attempts per turn: a reply naming a tool the process cannot see gets one corrective retry. */
export const MAX_ATTEMPTS = 2;

const iso = (deps: KernelDeps) => deps.clock.now().toISOString();

async function failProcess(deps: KernelDeps, pid: string, code: string, message: string): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (!p || TERMINAL_STATUSES.has(p.status)) return;
    await endProcess(deps, scope, pid, { kind: 'failed', code, message: message.slice(0, 2000) });
  });
}

/**
 * An error thrown after a saved call was claimed (pending → resuming) leaves its settlement unknown: the process
 * fails closed with the audit `llm.pending_action_resume_interrupted`, and the call is never replayed. (A resumed
 * call that merely fails is an ordinary tool failure: the broker returns it and settles the saved call.)
 */
async function failInterruptedResume(deps: KernelDeps, pid: string, call: { readonly tool: string; readonly callId: string }, e: LibosError): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (!p || TERMINAL_STATUSES.has(p.status)) return;
    await scope.audit.record({ action: 'llm.pending_action_resume_interrupted', target: `process:${pid}`, decision: 'failed', details: { pid, tool: call.tool, call_id: call.callId, error: e.toJSON() } });
    await endProcess(deps, scope, pid, { kind: 'failed', code: 'pending_action_resume_interrupted', message: `${call.tool} failed to resume (${e.code}: ${e.message})`.slice(0, 2000) });
  });
}

async function killForBudget(deps: KernelDeps, pids: readonly string[], message: string): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    for (const pid of pids) {
      const p = await findProcess(scope.store, pid);
      if (p && !TERMINAL_STATUSES.has(p.status)) await endProcess(deps, scope, pid, { kind: 'killed', code: 'resource_limit_exceeded', reason: message.slice(0, 2000) });
    }
  });
}

function stopFor(r: ToolCallResult): StopReason | null {
  if (!r.ok) return r.error.code === 'interrupted_by_message' ? 'interrupted_by_message' : r.error.code === 'resource_limit_exceeded' ? 'resource_limit_exceeded' : 'tool_failed';
  if (r.wait) return r.wait.kind === 'human' ? 'waiting_human' : r.wait.kind === 'child' ? 'waiting_child' : r.wait.kind === 'task' ? 'waiting_task' : 'waiting_message';
  if (r.notices?.length) return 'message_notice';
  return null;
}

/** Runs a model's batch in order, stopping at the first wait, failure, notice, terminal state or exclusive call. */
async function dispatchBatch(deps: KernelDeps, pid: string, calls: readonly LlmToolCall[]): Promise<Omit<QuantumResult, 'pid' | 'kind'>> {
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
        ? await callTool(deps, pid, call.name, { __unparsable_arguments__: call.rawArguments ?? null }, { rejectArguments: call.argumentsError })
        : await callTool(deps, pid, call.name, call.arguments, { publishResult: true });
      executed.push(call.name);
      results.push(r);
      const s = stopFor(r);
      const after = await getProcess(deps.db, pid);
      if (TERMINAL_STATUSES.has(after.status)) stop = 'process_terminal';
      else if (s) stop = s;
      else if (deps.registry.tools.get(call.name)?.tool.exclusive && i < calls.length - 1) stop = 'exclusive';
      if (stop !== 'completed') {
        i++;
        break;
      }
    }
  }
  const skipped = calls.slice(i).map((c) => c.name);
  await inTransaction(deps.db, deps.scopes, pid, null, (scope) =>
    scope.audit.record({ action: 'llm.action_batch', target: `process:${pid}`, decision: stop, details: { requested: calls.map((c) => c.name), executed, skipped, stop_reason: stop, skipped_reason: skipped.length === 0 ? null : deps.registry.tools.get(executed[executed.length - 1] ?? '')?.tool.exclusive ? 'skipped_after_exclusive' : `stopped_by_${stop}` } }),
  );
  return { stopReason: stop, executed, skipped, results };
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
    const outcome = await inTransaction(deps.db, deps.scopes, pid, null, (scope) => deps.engine.budgets(scope).chargeOverage(pid, { llm_total_tokens: charged }));
    killPids = outcome.killPids;
  }
  if (budgeted && tokens === null) throw new LibosError('resource_limit_exceeded', `the provider reported no token usage while ${pid} has a token budget; failing closed`);
  if (budgeted && inconsistent) throw new LibosError('resource_limit_exceeded', `the provider reported inconsistent token usage (total ${tokens} < prompt ${p} + completion ${c}) while ${pid} has a token budget; failing closed`);
  if (killPids.length > 0) throw new LibosError('resource_limit_exceeded', `llm_total_tokens: the reply's ${charged} tokens overran a token budget; nothing is dispatched`, { details: { killPids } });
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

async function askModel(deps: KernelDeps, pid: string, opts: QuantumOptions): Promise<LlmResponse> {
  const p = await getProcess(deps.db, pid);
  const prompt = await renderPrompt(deps, p);
  const visible = new Set(p.visibleTools);
  const messages = [...prompt.messages];
  await clearPrompt(deps, pid, `llm:${opts.provider.name}`, prompt.labels);
  for (let attempt = 1; ; attempt++) {
    // One llm call and the context it is sent (≈ chars / 4, as rendered) are charged before it is made; an exhausted
    // llm_calls or context_total_tokens budget kills the process and the provider is never called.
    const contextTokens = attempt === 1 ? prompt.tokens : prompt.tokens + Math.ceil(messages.slice(prompt.messages.length).reduce((n, m) => n + m.content.length, 0) / 4);
    await inTransaction(deps.db, deps.scopes, pid, null, (scope) => deps.engine.budgets(scope).charge(pid, { llm_calls: 1, context_total_tokens: contextTokens }));
    const started = performance.now();
    let response: LlmResponse | null = null;
    let error: LibosError | null = null;
    try {
      // The provider gets its own copy: a corrective retry appends to `messages` after this attempt.
      response = await opts.provider.completeAction({ messages: [...messages], tools: prompt.tools, parallelToolCalls: true, pid });
    } catch (err) {
      error = LibosError.from(err);
    }
    const id = deps.ids.next('llm');
    const tokens = totalTokens(response);
    await inTransaction(deps.db, deps.scopes, pid, null, async (scope) => {
      await recordLlmCall(scope.store, { id, pid, imageId: p.imageId, provider: opts.provider.name, model: response?.model ?? opts.provider.model, request: { messages, tools: prompt.tools, parallelToolCalls: true }, response, error: error ? `${error.code}: ${error.message}` : null, latencyMs: performance.now() - started, createdAt: iso(deps), persistFullIo: opts.persistFullIo ?? true });
      await scope.events.emit('llm_call', { pid, llm_call_id: id, status: error ? 'error' : 'ok', total_tokens: tokens });
    });
    if (error) throw error;
    const r = response!;
    await chargeTokens(deps, pid, r, tokens);
    const unknown = r.toolCalls.filter((c) => !visible.has(c.name)).map((c) => c.name);
    if (unknown.length === 0) return r;
    if (attempt >= MAX_ATTEMPTS) throw new LibosError('tool_not_in_process_table', `the model asked for tools it cannot see (${unknown.join(', ')}) in ${MAX_ATTEMPTS} attempts`);
    messages.push({ role: 'user', content: `These tools are not available to you: ${unknown.join(', ')}. Call only these: ${[...visible].sort().join(', ')}.` });
  }
}

/**
 * One quantum for one pid: claim it (runnable → running), then either resume its saved blocked call without a model
 * call, or run one model turn and dispatch the batch; then hand it back (running → runnable) unless the quantum
 * parked or ended it. An exception inside the quantum fails the process.
 */
export async function runQuantum(deps: KernelDeps, pid: string, opts: QuantumOptions): Promise<QuantumResult> {
  try {
    await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => transition(scope.store, pid, { from: ['runnable'], to: 'running' }, iso(deps)));
  } catch (err) {
    if (err instanceof LibosError && (err.code === 'invalid_state' || err.code === 'conflict' || err.code === 'process_not_found')) return { pid, kind: 'skipped', executed: [], skipped: [], results: [] };
    throw err;
  }
  const startedAt = deps.clock.now().getTime();
  let result: QuantumResult;
  let resuming: { readonly tool: string; readonly callId: string } | null = null;
  try {
    const pending = await findPendingAction(deps.db, pid);
    // A runner (an ObjectTask) only ever resumes its one saved call: it never asks a model.
    const runner = await findRunner(deps.db, pid);
    if (pending) {
      const claimed = await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => claimPendingAction(scope.store, pid, pending.resumeToken, iso(deps)));
      if (!claimed) throw new LibosError('conflict', `pending action of ${pid} was claimed by another worker`);
      resuming = { tool: pending.tool, callId: pending.callId };
      // A runner's call saved at its birth (`{kind:'tool'}`) has never run: it runs as a first call.
      const resume = { token: pending.resumeToken, callId: pending.callId, wait: pending.wait, firstRun: (pending.wait as { kind: string }).kind === 'tool' };
      const r = await callTool(deps, pid, pending.tool, pending.args, runner ? { resume, runner: runnerCallHooks(deps, runner) } : { resume, publishResult: true });
      const after = await getProcess(deps.db, pid);
      result = { pid, kind: 'resumed', stopReason: TERMINAL_STATUSES.has(after.status) ? 'process_terminal' : (stopFor(r) ?? 'completed'), executed: [pending.tool], skipped: [], results: [r] };
    } else if (runner) {
      throw new LibosError('invalid_state', `runner ${pid} holds no saved call; a runner never asks a model`);
    } else {
      const response = await askModel(deps, pid, opts);
      if (response.toolCalls.length === 0) {
        const n = (opts.emptyReplies?.get(pid) ?? 0) + 1;
        opts.emptyReplies?.set(pid, n);
        if (n >= (opts.maxEmptyReplies ?? 3)) throw new LibosError('invalid_state', `the model replied without a tool call ${n} times in a row`);
        result = { pid, kind: 'turn', stopReason: 'empty_reply', executed: [], skipped: [], results: [] };
      } else {
        opts.emptyReplies?.delete(pid);
        result = { pid, kind: 'turn', ...(await dispatchBatch(deps, pid, response.toolCalls)) };
        // A model that only makes refused calls (bad arguments, unread interrupts, denials) makes no progress and
        // would spend model calls for ever: after maxStalledTurns such turns in a row the process fails.
        const progressed = result.results.some((r) => r.ok);
        const stalled = progressed ? 0 : (opts.stalledTurns?.get(pid) ?? 0) + 1;
        if (stalled === 0) opts.stalledTurns?.delete(pid);
        else opts.stalledTurns?.set(pid, stalled);
        const maxStalled = opts.maxStalledTurns ?? DEFAULT_MAX_STALLED_TURNS;
        if (stalled >= maxStalled) throw new LibosError('invalid_state', `no progress: every call of ${pid}'s last ${stalled} model turns was refused (the last: ${result.results.map((r) => (r.ok ? 'ok' : r.error.code)).join(', ')})`);
      }
    }
  } catch (err) {
    const e = LibosError.from(err);
    const kill = e.code === 'resource_limit_exceeded' ? (e.details?.killPids as string[] | undefined) : undefined;
    if (resuming) await failInterruptedResume(deps, pid, resuming, e);
    else if (e.code === 'resource_limit_exceeded') await killForBudget(deps, kill?.length ? kill : [pid], e.message);
    else await failProcess(deps, pid, e.code, e.message);
    result = { pid, kind: 'failed', executed: [], skipped: [], results: [] };
  }
  // The quantum's wall time is charged afterwards (with overage): a process over its runtime budget is killed.
  const seconds = Math.max(0, (deps.clock.now().getTime() - startedAt) / 1000);
  const over = await inTransaction(deps.db, deps.scopes, pid, null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (!p || TERMINAL_STATUSES.has(p.status)) return null;
    return deps.engine.budgets(scope).chargeOverage(pid, { runtime_seconds: seconds });
  });
  if (over?.exceeded) {
    await killForBudget(deps, over.killPids, `runtime_seconds: the quantum of ${pid} took ${seconds.toFixed(3)} s and went over a runtime budget`);
    result = { ...result, kind: 'failed' };
  }
  await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const p = await findProcess(scope.store, pid);
    if (p?.status === 'running') await transition(scope.store, pid, { from: ['running'], to: 'runnable' }, iso(deps));
  });
  return result;
}
