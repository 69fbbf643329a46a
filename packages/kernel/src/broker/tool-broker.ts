import type { z } from 'zod';
import { canonicalJson, isToolWait, LibosError, SERVICE_NAMES, sha256Hex, ToolWait, type Authority, type CheckOptions, type ObjectsService, type ToolContext, type WaitSpec } from '@libos/sdk';
import { createHumanRequest, getHumanRequest } from '../human/human-queue.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { unreadSummary } from '../mailbox/messages.js';
import { completePendingAction, discardPendingAction, savePendingAction } from '../processes/pending-actions.js';
import { TERMINAL_STATUSES, TOOL_CALLABLE_STATUSES } from '../processes/process-record.js';
import { statusForWait } from '../processes/process-state.js';
import { findProcess, getProcess } from '../processes/process-store.js';
import type { RunnerCallHooks } from '../processes/runners.js';
import { transition } from '../processes/transition.js';
import { inTransaction, type TxScope } from '../store/transaction.js';
import { parseArguments } from './parse-arguments.js';
import type { ToolCallResult, ToolNotice } from './tool-result.js';

/** Tools that read or send mail: an unread interrupt does not stop them. */
export const MESSAGE_TOOLS: ReadonlySet<string> = new Set(['receive_process_messages', 'read_process_messages', 'send_process_message']);

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Re-dispatch of a saved blocked call (claimed by the scheduler): no new charge, `ctx.resumed` is true. */
  readonly resume?: {
    readonly token: string;
    readonly callId: string;
    readonly wait?: WaitSpec;
    /** The saved call never ran yet (a runner's call, saved at its birth): it runs as a first call, `ctx.resumed` false. */
    readonly firstRun?: boolean;
  };
  /** The model's arguments did not parse: refuse with invalid_arguments carrying this reason, run nothing. */
  readonly rejectArguments?: string;
  /**
   * Publish the result as an immutable `tool_result` Object owned by the pid and rooted in its MemoryView, in the
   * call's transaction (the executor's path: turns are stateless, so results reach the model through its view).
   */
  readonly publishResult?: boolean;
  /**
   * The call is a runner's saved call (an ObjectTask): its observer hears that it starts, and how it settles (done,
   * waiting, or failed), inside the same transaction as the call's own effects or its failure record.
   */
  readonly runner?: RunnerCallHooks;
}

/** Results larger than this (JSON chars) are published as a digest and a preview, not whole. */
export const MAX_PUBLISHED_RESULT_CHARS = 100_000;

/** Where published results live: a child of the process scope, so they never crowd the model's own listing. */
export const toolResultsNamespace = (pid: string) => `process:${pid}/tool_results`;

async function publishResult(ctx: ToolContext, scope: TxScope, pid: string, callId: string, tool: string, payload: unknown, resultDigest: { sha256: string | null; bytes: number | null }) {
  // A call that ended its process (process_exit) has nobody left to read its result.
  if (TERMINAL_STATUSES.has((await getProcess(scope.store, pid)).status)) return;
  const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
  // The result carries everything the call observed: its labels never fall below the call's flow.
  const labels = await ctx.flow.labels();
  const parentOids = ctx.flow.sources().filter((oid) => /^obj_[0-9a-f]{16}$/.test(oid));
  const text = JSON.stringify(payload ?? null);
  const body = text.length <= MAX_PUBLISHED_RESULT_CHARS ? { tool, call_id: callId, payload: payload ?? null } : { tool, call_id: callId, truncated: true, result_sha256: resultDigest.sha256, result_bytes: resultDigest.bytes, preview: text.slice(0, 4_000) };
  await objects.createForProcess(pid, { type: 'tool_result', name: `tool_result:${callId}`, namespace: toolResultsNamespace(pid), ensureNamespace: true, payload: body, immutable: true, metadata: { title: `${tool} result` }, labels, parentOids });
}

function digest(value: unknown): { sha256: string | null; bytes: number | null } {
  try {
    const text = canonicalJson(value ?? null);
    return { sha256: sha256Hex(text), bytes: Buffer.byteLength(text, 'utf8') };
  } catch {
    return { sha256: null, bytes: null }; // not JSON: argument parsing reports it
  }
}

/**
 * The caller's authority for one call: every check names the operation (`tool:<name>`) and the hash of the exact
 * arguments, so a one-shot human approval binds to these arguments and no others.
 */
function callAuthority(deps: KernelDeps, scope: TxScope, pid: string, toolName: string, argsHash: string): Authority {
  const inner = deps.engine.authority(scope, pid);
  const withCall = <O extends CheckOptions>(opts?: O): O => ({ operation: `tool:${toolName}`, argsHash, ...(opts ?? {}) }) as O;
  return {
    pid,
    check: (resource, right, opts) => inner.check(resource, right, withCall(opts)),
    require: (resource, right, opts) => inner.require(resource, right, withCall(opts)),
    consume: (decision) => inner.consume(decision),
    grantTrusted: (spec) => inner.grantTrusted(spec),
  };
}

/** The hash one-shot approvals are bound to: the tool and its parsed arguments, canonically. */
export function callArgsHash(tool: string, args: unknown): string {
  return sha256Hex(canonicalJson({ tool, args: args ?? null }));
}

function toolContext(deps: KernelDeps, scope: TxScope, pid: string, callId: string, toolName: string, signal: AbortSignal, resumed: boolean, argsHash: string, resumedWait?: WaitSpec): ToolContext {
  return {
    ...scope,
    pid,
    callId,
    toolName,
    authority: callAuthority(deps, scope, pid, toolName, argsHash),
    budgets: deps.engine.budgets(scope),
    flow: deps.engine.flow(scope, pid),
    signal,
    resumed,
    ...(resumed && resumedWait ? { resumedWait } : {}),
    wait(spec) {
      throw new ToolWait(spec);
    },
  };
}

type RunOutcome = { readonly kind: 'done'; readonly payload: unknown } | { readonly kind: 'waiting'; readonly wait: WaitSpec };

/**
 * The one path of every tool call, in DESIGN.md's order:
 * 1 the name is in the caller's table; 2 the caller's status allows calls (and no unread interrupt stops it);
 * 3 arguments parse (nothing else runs otherwise); 4 one tool call is charged to the pid and every ancestor;
 * 5 `run` checks capabilities and acts; 6 state, audit and events commit in one transaction; 7 the envelope carries
 * the payload, a wait, or a closed-table error. A failed call leaves none of its writes; its failure is audited in
 * a transaction of its own (which also settles a failed resumed call's saved action). A call that waits commits the
 * wait state and a durable pending action instead.
 */
export async function callTool(deps: KernelDeps, pid: string, name: string, rawArgs: unknown, opts: CallOptions = {}): Promise<ToolCallResult> {
  const callId = opts.resume?.callId ?? deps.ids.next('call');
  const fail = (err: LibosError): ToolCallResult => ({ ok: false, call_id: callId, tool: name, error: err.toJSON() });
  const proc = await findProcess(deps.db, pid);
  if (!proc) return fail(new LibosError('process_not_found', `process ${pid} does not exist`, { details: { pid } }));

  const argsDigest = digest(rawArgs);
  const auditFailure = async (err: LibosError, charge: boolean) => {
    await inTransaction(deps.db, deps.scopes, pid, callId, async (scope) => {
      let charged = false;
      if (charge) {
        try {
          await deps.engine.budgets(scope).charge(pid, { tool_calls: 1 });
          charged = true;
        } catch (chargeErr) {
          // The budget ran out between the attempt and this record: the failure is still audited, uncharged.
          if (!(chargeErr instanceof LibosError && chargeErr.code === 'resource_limit_exceeded')) throw chargeErr;
        }
      }
      // A resumed call that fails is an ordinary tool failure: its saved action (still `resuming`, since the call's
      // own transaction rolled back) is settled with this record, so no later quantum finds it claimed.
      if (opts.resume) await discardPendingAction(scope.store, pid, opts.resume.token);
      await scope.events.emit('tool_failed', { pid, call_id: callId, tool: name, code: err.code });
      await scope.audit.record({ action: 'tool.call', target: `tool:${name}`, decision: err.code, details: { args_sha256: argsDigest.sha256, args_bytes: argsDigest.bytes, charged, resumed: Boolean(opts.resume), error: err.toJSON() } });
      await opts.runner?.settle(scope, { kind: 'failed', callId, error: err.toJSON() });
    });
  };

  // 1-3: checks that run nothing.
  const reg = deps.registry.tools.get(name);
  let args: unknown;
  try {
    if (!reg || !proc.visibleTools.includes(name)) {
      throw new LibosError('tool_not_in_process_table', `tool ${JSON.stringify(name)} is not in the tool table of ${pid}${reg ? ` (activate skill ${reg.skill} to see it)` : ' (no such tool is registered)'}`, {
        details: { tool: name, pid, ...(reg ? { skill: reg.skill } : {}) },
      });
    }
    if (!TOOL_CALLABLE_STATUSES.has(proc.status)) {
      throw new LibosError('process_not_tool_callable', `process ${pid} is ${proc.status}; tools can be called only while it is runnable or running`, { details: { pid, status: proc.status } });
    }
    const interrupts = !MESSAGE_TOOLS.has(name) && !opts.resume ? await unreadSummary(deps.db, pid, 'interrupt') : null;
    if (interrupts && interrupts.count > 0) {
      throw new LibosError('interrupted_by_message', `${name} was not run: ${pid} has ${interrupts.count} unread interrupt message(s) (${interrupts.message_ids.join(', ')}); read them with read_process_messages {message_ids} or receive_process_messages first`, {
        details: { pid, phase: 'before_tool_call', delivery: 'interrupt', ...interrupts },
      });
    }
    if (opts.rejectArguments) throw new LibosError('invalid_arguments', `arguments of ${name} are not a JSON object: ${opts.rejectArguments}`);
    args = parseArguments(reg.tool, rawArgs);
  } catch (err) {
    const e = LibosError.from(err);
    await auditFailure(e, false);
    return fail(e);
  }
  if (opts.resume?.wait?.kind === 'human') {
    const refused = await rejectedApproval(deps, opts.resume.wait.request_ids);
    if (refused) {
      // A human said no: the call never runs, and its saved action is gone with this failure.
      const e = new LibosError('permission_denied', `${name} was not run: human request ${refused.id} was ${refused.status}`, { details: { request_id: refused.id, status: refused.status } });
      await inTransaction(deps.db, deps.scopes, pid, callId, (scope) => completePendingAction(scope.store, pid, opts.resume!.token));
      await auditFailure(e, false);
      return fail(e);
    }
  }

  // 4-6: one transaction.
  const controller = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, controller.signal]) : controller.signal;
  let stage = 'charge' as 'charge' | 'run';
  try {
    const outcome = await inTransaction(deps.db, deps.scopes, pid, callId, async (scope): Promise<RunOutcome> => {
      if (opts.resume) await completePendingAction(scope.store, pid, opts.resume.token);
      else await deps.engine.budgets(scope).charge(pid, { tool_calls: 1 });
      stage = 'run';
      const resumed = Boolean(opts.resume) && !opts.resume?.firstRun;
      await scope.events.emit(resumed ? 'tool_resumed' : 'tool_called', { pid, call_id: callId, tool: name });
      await opts.runner?.start(scope);
      const ctx = toolContext(deps, scope, pid, callId, name, signal, resumed, callArgsHash(name, args), opts.resume?.wait);
      let out: unknown;
      try {
        out = await reg.tool.run(args, ctx);
      } catch (err) {
        if (!isToolWait(err)) throw err;
        const now = scope.clock.now().toISOString();
        await savePendingAction(scope.store, { pid, callId, tool: name, args, wait: err.wait }, now);
        await transition(scope.store, pid, { from: ['runnable', 'running'], to: statusForWait(err.wait), wait: err.wait }, now);
        await scope.events.emit('tool_waiting', { pid, call_id: callId, tool: name, wait: err.wait });
        await scope.audit.record({ action: 'tool.call', target: `tool:${name}`, decision: 'waiting', details: { args_sha256: argsDigest.sha256, args_bytes: argsDigest.bytes, wait: err.wait } });
        await opts.runner?.settle(scope, { kind: 'waiting', callId, wait: err.wait });
        return { kind: 'waiting', wait: err.wait };
      }
      if (reg.tool.output) {
        const parsed = (reg.tool.output as z.ZodType).safeParse(out);
        if (!parsed.success) throw new LibosError('internal_error', `tool ${name} returned output that does not match its schema: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(output)'}: ${i.message}`).join('; ')}`);
        out = parsed.data;
      }
      const resultDigest = digest(out);
      if (opts.publishResult && deps.registry.services.has(SERVICE_NAMES.objects)) await publishResult(ctx, scope, pid, callId, name, out, resultDigest);
      await scope.events.emit('tool_completed', { pid, call_id: callId, tool: name, result_sha256: resultDigest.sha256 });
      await scope.audit.record({ action: 'tool.call', target: `tool:${name}`, decision: 'ok', details: { args_sha256: argsDigest.sha256, args_bytes: argsDigest.bytes, result_sha256: resultDigest.sha256, result_bytes: resultDigest.bytes, resumed: Boolean(opts.resume) } });
      if (opts.runner) await opts.runner.settle(scope, { kind: 'succeeded', callId, payload: out ?? null, labels: await ctx.flow.labels(), sourceOids: ctx.flow.sources() });
      return { kind: 'done', payload: out };
    });
    if (outcome.kind === 'waiting') return { ok: true, call_id: callId, tool: name, payload: null, wait: outcome.wait };
    const notices = await messageNotices(deps, pid, name);
    return { ok: true, call_id: callId, tool: name, payload: outcome.payload, ...(notices.length ? { notices } : {}) };
  } catch (err) {
    controller.abort();
    const e = LibosError.from(err);
    if (e.code === 'approval_required' && stage === 'run') {
      try {
        return await parkForApproval(deps, pid, callId, name, args, e, opts.resume?.token, opts.runner);
      } catch (parkErr) {
        // Another saved call still waits: this one is refused like any failed run, and its park rolled back.
        if (!(parkErr instanceof LibosError && parkErr.code === 'call_already_waiting')) throw parkErr;
        await auditFailure(parkErr, !opts.resume);
        return fail(parkErr);
      }
    }
    // A refused charge charged nothing; a failed run still costs the attempt (a resumed one was charged already).
    await auditFailure(e, stage === 'run' && !opts.resume);
    return fail(e);
  }
}

/** Unread normal mail adds a notice to a result (message tools excepted: they are how mail is read). */
async function messageNotices(deps: KernelDeps, pid: string, tool: string): Promise<ToolNotice[]> {
  if (MESSAGE_TOOLS.has(tool)) return [];
  const p = await findProcess(deps.db, pid);
  if (!p || !TOOL_CALLABLE_STATUSES.has(p.status)) return [];
  const unread = await unreadSummary(deps.db, pid, 'normal');
  if (unread.count === 0) return [];
  return [
    {
      kind: 'message_notice',
      phase: 'after_tool_call',
      unread: unread.count,
      message_ids: unread.message_ids,
      channels: unread.channels,
      correlation_ids: unread.correlation_ids,
      message: `${unread.count} unread message(s): read them with receive_process_messages or read_process_messages before you exit`,
    },
  ];
}

/** The first settled-but-not-approved per-use permission request among a wait's requests, if any. */
async function rejectedApproval(deps: KernelDeps, requestIds: readonly string[]) {
  for (const id of requestIds) {
    const req = await getHumanRequest(deps.db, id);
    // Only a per-use approval (an `ask` grant met mid-call) refuses its call here; a standing request's own tool
    // (request_permission) resumes and reports the decision, a rejection included (kernel spec §2, K-19).
    if (req && req.kind === 'permission' && req.details.mode === 'per_use' && (req.status === 'rejected' || req.status === 'cancelled')) return req;
  }
  return null;
}

/**
 * A tool met an `ask` grant: nothing it did stays (its transaction rolled back). In a transaction of its own the
 * call is charged, a per-use permission request (resource, right, hash of the exact arguments) joins the human
 * queue, the call is saved, and the process waits for the answer. Approval resumes the identical call once. A resumed
 * call re-arms its own saved action (by `resumeToken`); a new call while another is saved throws `call_already_waiting`.
 */
async function parkForApproval(deps: KernelDeps, pid: string, callId: string, name: string, args: unknown, e: LibosError, resumeToken: string | undefined, runner?: RunnerCallHooks): Promise<ToolCallResult> {
  const resource = String(e.details?.resource ?? '');
  const right = String(e.details?.right ?? '');
  const argsHash = callArgsHash(name, args);
  const wait = await inTransaction(deps.db, deps.scopes, pid, callId, async (scope) => {
    if (resumeToken) await completePendingAction(scope.store, pid, resumeToken);
    else await deps.engine.budgets(scope).charge(pid, { tool_calls: 1 });
    const now = scope.clock.now().toISOString();
    const req = await createHumanRequest(scope.store, pid, { kind: 'permission', prompt: `${pid} asks to ${right} ${resource} for ${name}`, details: { mode: 'per_use', resource, rights: [right], args_hash: argsHash, tool: name, call_id: callId } }, now);
    const w: WaitSpec = { kind: 'human', request_ids: [req.id] };
    await savePendingAction(scope.store, { pid, callId, tool: name, args, wait: w }, now);
    await transition(scope.store, pid, { from: ['runnable', 'running'], to: 'waiting_human', wait: w }, now);
    await scope.events.emit('human_request_created', { pid, request_id: req.id, kind: 'permission', resource, right });
    await scope.audit.record({ action: 'tool.call', target: `tool:${name}`, decision: 'approval_required', details: { args_sha256: argsHash, resource, right, request_id: req.id } });
    await runner?.settle(scope, { kind: 'waiting', callId, wait: w });
    return w;
  });
  return { ok: true, call_id: callId, tool: name, payload: null, wait };
}
