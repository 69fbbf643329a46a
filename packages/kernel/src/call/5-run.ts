import type { z } from 'zod';
import {
  isToolWait,
  LibosError,
  resources,
  ToolWait,
  type Authority,
  type CheckOptions,
  type ErrorPayload,
  type ServiceScope,
  type ToolContext,
  type WaitSpec,
} from '@libos/sdk';
import type { TxScope } from '../store/transaction.js';
import { isResumption, type ParsedCall } from './call-state.js';
import { hooksAt, type CallHook } from './hooks.js';

/** What the tool did: returned a payload (checked against its `output`), or asked to wait. */
export type RunResult =
  | { readonly kind: 'done'; readonly payload: unknown; readonly ctx: ToolContext }
  | { readonly kind: 'waiting'; readonly wait: WaitSpec; readonly resumeArgs?: Readonly<Record<string, unknown>> };

/** Writes a tool registered with `ctx.onFailure`: they commit with the call's failure record, if it fails. */
export type FailureWrite = (scope: ServiceScope, error: ErrorPayload) => Promise<void>;

/**
 * The caller's authority for one call: every check names the operation (`tool:<name>`) and the approval hash of the
 * exact arguments, so a one-shot human approval binds to these arguments and no others.
 */
function callAuthority(call: ParsedCall, scope: TxScope): Authority {
  const inner = call.deps.engine.authority(scope, call.pid);
  const withCall = <O extends CheckOptions>(opts?: O): O =>
    ({ operation: resources.tool(call.toolName), argsHash: call.approvalHash(), ...(opts ?? {}) }) as O;
  return {
    pid: call.pid,
    check: (resource, right, opts) => inner.check(resource, right, withCall(opts)),
    require: (resource, right, opts) => inner.require(resource, right, withCall(opts)),
    consume: (decision) => inner.consume(decision),
    grantTrusted: (spec) => inner.grantTrusted(spec),
  };
}

/**
 * `Ctx` when it names every ServiceScope field, else a type no context matches, naming the fields it leaves out: the
 * tool context copies the scope's fields one by one, so a field added to ServiceScope fails to compile until copied.
 */
type NamesEveryScopeField<Ctx> = [Exclude<keyof ServiceScope, keyof Ctx>] extends [never]
  ? Ctx
  : { readonly scopeFieldsLeftOut: Exclude<keyof ServiceScope, keyof Ctx> };

/**
 * The tool's context: the scope's fields (named one by one: spreading the scope was ~5% of a call's CPU; checked to
 * name them all), then the call's own.
 */
function toolContext(call: ParsedCall, scope: TxScope, signal: () => AbortSignal, onFailure: FailureWrite[]): ToolContext {
  const resumed = isResumption(call);
  const resumedWait = call.entry.kind === 'saved' ? call.entry.wait : undefined;
  const ctx = {
    store: scope.store,
    actor: scope.actor,
    clock: scope.clock,
    events: scope.events,
    audit: scope.audit,
    afterCommit: scope.afterCommit,
    onRollback: scope.onRollback,
    service: scope.service,
    hasService: scope.hasService,
    authorityFor: scope.authorityFor,
    ...(scope.memo ? { memo: scope.memo } : {}),
    ...(scope.runtime ? { runtime: scope.runtime } : {}),
    pid: call.pid,
    callId: call.callId,
    toolName: call.toolName,
    authority: callAuthority(call, scope),
    budgets: call.deps.engine.budgets(scope),
    flow: call.deps.engine.flow(scope, call.pid),
    /** Made on first read: most tools never look at it, and an AbortSignal per call is not free. */
    get signal() {
      return signal();
    },
    resumed,
    ...(resumed && resumedWait ? { resumedWait } : {}),
    wait(spec, opts) {
      throw new ToolWait(spec, opts);
    },
    onFailure(write) {
      onFailure.push(write);
    },
  } satisfies ToolContext & { readonly actor: string };
  return ctx satisfies NamesEveryScopeField<typeof ctx>;
}

/**
 * Step 5, in the call's transaction: the call is announced (`tool_called`, or `tool_resumed` for a resumption), the
 * hooks hear it start, and `run` checks capabilities for the exact resources it touches and performs the primitive.
 * A `ctx.wait(...)` becomes a wait; output that does not match the tool's schema is an `internal_error`.
 */
export async function runTool(
  call: ParsedCall,
  scope: TxScope,
  hooks: readonly CallHook[],
  signal: () => AbortSignal,
  onFailure: FailureWrite[] = [],
): Promise<RunResult> {
  await scope.events.emit(isResumption(call) ? 'tool_resumed' : 'tool_called', {
    pid: call.pid,
    call_id: call.callId,
    tool: call.toolName,
  });
  for (const h of hooksAt(hooks, 'started')) await h.started(call, scope);
  const ctx = toolContext(call, scope, signal, onFailure);
  let out: unknown;
  try {
    out = await call.tool.run(call.args, ctx);
  } catch (err) {
    if (isToolWait(err)) return { kind: 'waiting', wait: err.wait, ...(err.resumeArgs ? { resumeArgs: err.resumeArgs } : {}) };
    throw err;
  }
  if (call.tool.output) {
    const parsed = (call.tool.output as z.ZodType).safeParse(out);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(output)'}: ${i.message}`).join('; ');
      throw new LibosError('internal_error', `tool ${call.toolName} returned output that does not match its schema: ${issues}`);
    }
    out = parsed.data;
  }
  return { kind: 'done', payload: out, ctx };
}
