import {
  canonicalJson,
  sha256Hex,
  type AnyTool,
  type ErrorPayload,
  type FlowContext,
  type LibosError,
  type ToolContext,
  type WaitSpec,
} from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { ProcessInfo } from '../processes/process-record.js';
import type { RunnerRecord } from '../processes/runners.js';

/**
 * Who asked for a call. The subsystems' hooks read it: a model's call publishes its result to the process's view
 * (results), a runner's call tells its observer how it settles (runners); a host call (CLI, HTTP, MCP) does neither.
 */
export type CallOrigin =
  | { readonly kind: 'host' }
  | { readonly kind: 'model' }
  | { readonly kind: 'runner'; readonly runner: RunnerRecord };

/** How the call enters: a fresh call (charged at step 4), or the re-dispatch of a saved waiting call (not charged again). */
export type CallEntry =
  | { readonly kind: 'fresh' }
  | {
      readonly kind: 'saved';
      readonly token: string;
      readonly wait?: WaitSpec;
      /** The saved call never ran yet (a runner's call, saved at its birth): it runs as a first call, `ctx.resumed` false. */
      readonly firstRun: boolean;
    };

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Default `{ kind: 'host' }`. */
  readonly origin?: CallOrigin;
  /** Re-dispatch of a saved blocked call (claimed by the scheduler): no new charge, `ctx.resumed` is true. */
  readonly resume?: {
    readonly token: string;
    readonly callId: string;
    readonly wait?: WaitSpec;
    readonly firstRun?: boolean;
  };
  /** The model's arguments did not parse: refuse with invalid_arguments carrying this reason, run nothing. */
  readonly rejectArguments?: string;
}

/** The canonical sha256 and UTF-8 size of a JSON value (both null when it is not JSON). */
export interface JsonDigest {
  readonly sha256: string | null;
  readonly bytes: number | null;
}

/** The call as it was asked: what every step sees. */
export interface CallState {
  readonly deps: KernelDeps;
  readonly pid: string;
  readonly callId: string;
  readonly toolName: string;
  readonly rawArgs: unknown;
  readonly origin: CallOrigin;
  readonly entry: CallEntry;
  readonly signal: AbortSignal | undefined;
  readonly rejectArguments: string | undefined;
}

/** After step 1: the caller's process row (read once per call) and the registered tool. */
export interface ResolvedCall extends CallState {
  readonly process: ProcessInfo;
  readonly tool: AnyTool;
}

/** After step 3: the parsed arguments and their canonical digest, computed once and carried to every audit row. */
export interface ParsedCall extends ResolvedCall {
  readonly args: unknown;
  readonly argsDigest: JsonDigest;
  /**
   * The hash one-shot human approvals bind to: the tool and its parsed arguments, canonically (`{args, tool}`).
   * Computed once, on first use (most calls meet no authority check that needs it).
   */
  approvalHash(): string;
}

/** True once the call's arguments parsed (step 3). */
export const isParsed = (call: CallState): call is ParsedCall => 'argsDigest' in call;

/** What a call came to. `done` keeps the tool's context for the hooks that record it (its flow: labels, sources). */
export type CallOutcome =
  | { readonly kind: 'done'; readonly payload: unknown; readonly ctx: ToolContext }
  | { readonly kind: 'waiting'; readonly wait: WaitSpec }
  | { readonly kind: 'failed'; readonly error: LibosError };

/** How a call settled, as the settle hooks hear it (in the transaction that records it). */
export type CallSettlement =
  | { readonly kind: 'succeeded'; readonly payload: unknown; readonly flow: FlowContext }
  | { readonly kind: 'waiting'; readonly wait: WaitSpec }
  | { readonly kind: 'failed'; readonly error: ErrorPayload };

/** A new call: its id (a saved call keeps its own), origin and entry. */
export function newCall(deps: KernelDeps, pid: string, toolName: string, rawArgs: unknown, opts: CallOptions): CallState {
  const r = opts.resume;
  return {
    deps,
    pid,
    callId: r?.callId ?? deps.ids.next('call'),
    toolName,
    rawArgs,
    origin: opts.origin ?? { kind: 'host' },
    entry: r ? { kind: 'saved', token: r.token, ...(r.wait ? { wait: r.wait } : {}), firstRun: r.firstRun === true } : { kind: 'fresh' },
    signal: opts.signal,
    rejectArguments: opts.rejectArguments,
  };
}

/** The canonical digest of a JSON value, or nulls when it is not JSON. */
export function jsonDigest(value: unknown): JsonDigest & { readonly text: string | null } {
  let text: string;
  try {
    text = canonicalJson(value ?? null);
  } catch {
    return { sha256: null, bytes: null, text: null };
  }
  return { sha256: sha256Hex(text), bytes: Buffer.byteLength(text, 'utf8'), text };
}

/** The `resumed` flag of audit rows: any re-dispatch of a saved call, a runner's first run included. */
export const isSavedCall = (call: CallState): boolean => call.entry.kind === 'saved';

/** `ctx.resumed`: a saved call that ran before (a runner's first run is not a resumption). */
export const isResumption = (call: CallState): boolean => call.entry.kind === 'saved' && !call.entry.firstRun;
