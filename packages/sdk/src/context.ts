import type { ErrorCode, ErrorPayload } from './errors.js';
import type { DataLabels } from './labels.js';
import type { BudgetField, Effect, Right, Usage } from './rights.js';
import type { WaitOptions, WaitSpec } from './waits.js';
import type { StoreMemo } from './store-memo.js';

/** Wall clock. Inject a fake one in tests. */
export interface Clock {
  now(): Date;
  /**
   * Waits `ms` of this clock's time (the scheduler, idle until a timer is due). Default: a real timer. A fake clock
   * can advance itself here instead.
   */
  sleep?(ms: number): Promise<void>;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * An authority decision for one (resource, right) under one pid.
 * `effect: 'missing'` means no grant matched (default deny).
 */
export interface Decision {
  readonly subject: string;
  readonly resource: string;
  readonly right: Right;
  readonly allowed: boolean;
  readonly effect: Effect | 'missing';
  readonly reason: string;
  readonly matchedIds: readonly string[];
  readonly selectedId?: string;
  /** Set when the selected grant has finite uses: the use `consume` spends. */
  readonly consumeId?: string;
}

export interface CheckOptions {
  /** Operation name for rule-scoped constraints, e.g. `tool:append_memory_object`. */
  readonly operation?: string;
  /** sha256 of the canonical arguments; binds one-shot approvals to exact arguments. */
  readonly argsHash?: string;
}

export interface RequireOptions extends CheckOptions {
  /** Error code thrown on denial (default `permission_denied`). */
  readonly code?: ErrorCode;
  /** Message thrown on denial (default names the resource and right). */
  readonly message?: string;
  /** Spend a finite use now (default true). The use is restored if the call's transaction rolls back. */
  readonly consume?: boolean;
}

/** What a grant says. */
export interface GrantSpec {
  readonly subject: string;
  readonly resource: string;
  readonly rights: readonly Right[];
  readonly effect?: Effect;
  readonly usesRemaining?: number;
  readonly expiresAt?: string;
  readonly delegable?: boolean;
  readonly maxDepth?: number;
  readonly constraints?: Readonly<Record<string, unknown>>;
  readonly metadata?: Readonly<Record<string, string>>;
  /**
   * The subject's rights as the owner of `resource` (a kind with a registered `OwnershipResolver`): nothing is
   * stored, the engine derives the grant from ownership at every check. It confirms the resolver agrees (same
   * owner, same rights; only subject, resource and rights may be given, and the issuer must be the owner), records
   * the usual `capability.issue` audit and `capability.granted` event, and returns the id `cap_own:<resource>`.
   */
  readonly ownership?: boolean;
}

/**
 * Authority under the caller's pid. Every protected effect asks here, in the call's transaction.
 *
 * @example
 * import { resources } from '@libos/sdk';
 * await ctx.authority.require(resources.namespace(ns), 'write', { code: 'namespace_denied' });
 */
export interface Authority {
  readonly pid: string;
  /** Decides without spending anything. */
  check(resource: string, right: Right, opts?: CheckOptions): Promise<Decision>;
  /** Decides, throws a LibosError unless allowed, and spends a finite use (restored if the transaction rolls back). */
  require(resource: string, right: Right, opts?: RequireOptions): Promise<Decision>;
  /** Spends the finite use a decision selected (no-op for unlimited grants). Throws `permission_denied` if it is gone. */
  consume(decision: Decision): Promise<void>;
  /** Issues a grant as the trusted host, on behalf of the primitive being run (e.g. a creator's handle). */
  grantTrusted(spec: GrantSpec): Promise<string>;
}

/** Budgets of a process tree. Charges hit the pid and every ancestor in one transaction. */
export interface Budgets {
  charge(pid: string, usage: Usage, opts?: { readonly allowOverage?: boolean }): Promise<void>;
  remaining(pid: string): Promise<Partial<Record<BudgetField, number | null>>>;
}

/** Durable events, written in the call's transaction and published after commit. */
export interface EventSink {
  emit(type: string, data?: Readonly<Record<string, unknown>>): Promise<void>;
}

/** An audit record: ids, hashes, sizes and labels; never payloads. */
export interface AuditEntry {
  readonly action: string;
  readonly target?: string;
  readonly decision?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface AuditSink {
  record(entry: AuditEntry): Promise<void>;
}

/** The data-flow context of one operation: labels and sources of everything the caller observed. */
export interface FlowContext {
  /** Current labels of the calling process (its high-water mark joined with this call's observations). */
  labels(): Promise<DataLabels>;
  /** Object ids this call (and the process) observed, deduplicated. */
  sources(): readonly string[];
  /** Records that the caller observed data with these labels (raises the process high-water; never lowers it). */
  taint(labels: Partial<DataLabels>, sourceOids?: readonly string[]): Promise<void>;
}

/** What every service factory and hook receives: the store transaction plus the runtime facilities. */
export interface ServiceScope {
  /** The store transaction (a `Kysely<any>` transaction). Typed structurally so the sdk depends on zod only. */
  readonly store: unknown;
  readonly clock: Clock;
  readonly events: EventSink;
  readonly audit: AuditSink;
  /** Runs `fn` after the transaction commits (e.g. publish to listeners). */
  afterCommit(fn: () => void): void;
  /** Runs `fn` if the transaction rolls back (e.g. undo a runtime-local cache write). */
  onRollback(fn: () => void): void;
  /** Resolves another plugin's service by name, bound to this same transaction. Throws `not_found` if none. */
  service<T>(name: string): T;
  /** Whether a loaded plugin (or the kernel) provides the service `name`; see `optionalService`. */
  hasService?(name: string): boolean;
  /** Authority of any pid, in this transaction (host code asks on a process's behalf). */
  authorityFor(pid: string): Authority;
  /** The store's read cache (`store-memo.ts`): hot rows read once, dropped by any write to their tables. */
  readonly memo?: StoreMemo;
  /** Which runtime instance holds runtime-local state (payloads): this one, or another live host of a shared store. */
  readonly runtime?: RuntimeInstance;
}

/**
 * The runtime instance a scope runs in, for state that lives in a runtime's memory only (Object payloads, the seed's
 * rule). An instance is new at every open; among many hosts on one store, another host's instance stays live while
 * that host renews its leases.
 *
 * @example
 * declare const scope: ServiceScope;
 * const here = scope.runtime?.instanceId;                  // stamp what this runtime holds
 * const host = await scope.runtime?.holder('h1.k3x9qz');  // 'h1' while that host lives, else null
 */
export interface RuntimeInstance {
  readonly instanceId: string;
  /** The live host (its id) whose runtime is `instanceId`, other than this one; null when gone (or this one). */
  holder(instanceId: string): Promise<string | null>;
}

/**
 * What a tool's `run` receives. Everything it changes goes through `store` (one transaction per call):
 * if `run` throws, nothing it wrote, spent or emitted remains.
 */
export interface ToolContext extends ServiceScope {
  /** The calling process. */
  readonly pid: string;
  readonly callId: string;
  readonly toolName: string;
  readonly authority: Authority;
  readonly budgets: Budgets;
  readonly flow: FlowContext;
  readonly signal: AbortSignal;
  /** True when this run resumes a call that was parked in a wait (the model was not asked again). */
  readonly resumed: boolean;
  /** On a resumed run, the wait the call was parked in (e.g. a timer's start), else undefined. */
  readonly resumedWait?: WaitSpec;
  /** Parks the process in a typed wait; the saved call re-runs when the wait is satisfied. Never returns. */
  wait(spec: WaitSpec, opts?: WaitOptions): never;
  /**
   * Registers a write that commits only if this call fails: it runs in the transaction that records the failure
   * (the call's own writes are rolled back by then), e.g. marking a multi-stage job failed. The broker always
   * provides it; a test double may leave it out.
   *
   * @example
   * declare const job: string, markJobFailed: (scope: ServiceScope, job: string, why: string) => Promise<void>;
   * ctx.onFailure?.(async (scope) => markJobFailed(scope, job, 'spawn denied'));
   */
  onFailure?(write: (scope: ServiceScope, error: ErrorPayload) => Promise<void>): void;
}
