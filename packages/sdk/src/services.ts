import type { DataLabels } from './labels.js';

/**
 * Service interfaces: how the kernel and plugins reach each other without importing each other.
 * A plugin provides an implementation under a well-known name (`SERVICE_NAMES`); the kernel and other
 * plugins resolve it with `scope.service<T>(name)`, bound to the current transaction.
 */
export const SERVICE_NAMES = { objects: 'objects', processes: 'processes', human: 'human' } as const;

/** An object created by the host on behalf of a process (goals, tool results, exit results). */
export interface HostObjectInput {
  readonly type: string;
  readonly payload: unknown;
  readonly name?: string;
  readonly namespace?: string;
  readonly immutable?: boolean;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly parentOids?: readonly string[];
  readonly labels?: Partial<DataLabels>;
  /** Attach the new handle as a root of the owner's MemoryView (default true). */
  readonly attachToView?: boolean;
  /**
   * Create `namespace` if it is missing, as a direct child of the owner's process scope (`process:<pid>/<name>`),
   * granting the owner read/write/admin on it. Refused for any other namespace.
   */
  readonly ensureNamespace?: boolean;
}

export interface ObjectRef {
  readonly oid: string;
  readonly namespace: string;
  readonly name: string;
  readonly type: string;
  readonly version: number;
}

/** One root's fate in a rendered view. */
export interface ViewManifestEntry {
  readonly oid: string;
  readonly version: number | null;
  readonly disposition: 'included' | 'omitted';
  readonly reason: 'included' | 'capability_denied' | 'missing' | 'filter_mismatch' | 'token_budget' | 'payload_unavailable';
  readonly tokens: number;
}

export interface RenderedView {
  /** Prompt text for the MemoryView section ('' when nothing is materialized). */
  readonly text: string;
  readonly tokens: number;
  readonly manifest: readonly ViewManifestEntry[];
  readonly labels: DataLabels;
  readonly sourceOids: readonly string[];
}

/**
 * The Object Memory service (provided by `@libos/object-memory` as `objects`).
 * Host-side operations: they do not check the caller's rights; the kernel calls them for its own effects.
 */
export interface ObjectsService {
  /** Creates the process scope `process:<pid>`, grants the pid read/write/admin on it, and an empty MemoryView. */
  initProcess(pid: string): Promise<void>;
  /** Creates an object owned by `ownerPid` (grants the owner its creator handle). */
  createForProcess(ownerPid: string, input: HostObjectInput): Promise<ObjectRef>;
  /** Adds `oid` as a root of the pid's MemoryView (no duplicate roots). */
  attachRoot(pid: string, oid: string): Promise<void>;
  /** The payload of a live object, or throws (`object_not_found`, `payload_unavailable_after_reopen`). */
  readPayload(oid: string): Promise<unknown>;
  /** Identity of an object, or null. */
  describe(oid: string): Promise<(ObjectRef & { readonly labels: DataLabels; readonly payloadAvailable: boolean }) | null>;
  /** The pid's MemoryView roots in order (oid and the handle's capability id, if any). */
  viewRoots(pid: string): Promise<readonly { readonly oid: string; readonly capabilityId: string | null }[]>;
  /** Renders the pid's MemoryView for the LLM prompt (only roots the pid may `materialize`). */
  renderView(pid: string, opts?: { readonly tokenBudget?: number }): Promise<RenderedView>;
}

/** What a process service tells about a process. */
export interface ProcessSummary {
  readonly pid: string;
  readonly parentPid: string | null;
  readonly imageId: string;
  readonly status: string;
  readonly goalOid: string | null;
  readonly imageMetadata: Readonly<Record<string, string>>;
  /** The callable tool table (the image's default tools, exactly). */
  readonly toolTable: readonly string[];
}

/**
 * A message a human (`sender` starting with `human:`) posted to a process, with its current status. `status` moves
 * from `unread` to `acked` once; every other field is immutable.
 */
export interface HumanMessage {
  readonly message_id: string;
  readonly status: 'unread' | 'acked';
  readonly sender: string;
  /** The recipient pid. */
  readonly recipient: string;
  readonly kind: string;
  readonly channel: string;
  readonly correlation_id: string | null;
  readonly reply_to: string | null;
  readonly subject: string;
  readonly body: string;
  readonly payload: unknown;
}

export interface ExitReceipt {
  readonly pid: string;
  readonly status: 'exited';
  readonly result_oid: string | null;
  readonly state_generation: number;
}

/**
 * Process operations plugins need (provided by the kernel as `processes`).
 */
export interface ProcessService {
  get(pid: string): Promise<ProcessSummary>;
  /**
   * The exit transaction: terminal state and outcome, the `process_exited` event, the `process.exit` audit, the
   * release of the budget envelope and the parent's wake if it waits on this child, all in the caller's transaction.
   */
  exit(pid: string, outcome: { readonly resultOid: string | null }): Promise<ExitReceipt>;
  /**
   * Human messages of `pid` (sender `human:<name>`), unread and acked, oldest first; at most `limit` when given.
   *
   * @example
   * const msgs = await processes.humanMessages(pid, { limit: 1001 }); // more than 1000: too many to review
   */
  humanMessages(pid: string, opts?: { readonly limit?: number }): Promise<readonly HumanMessage[]>;
  /**
   * Names of the tools `pid` called successfully (a `tool.call` audit with decision `ok`), each once, in first-seen
   * order; `process_exit` is never listed.
   *
   * @example
   * await processes.observedSuccessfulTools(pid); // ['list_memory_namespace', 'create_memory_object']
   */
  observedSuccessfulTools(pid: string): Promise<readonly string[]>;
}

export type HumanRequestKind = 'question' | 'permission';
export type HumanRequestStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';

export interface HumanRequest {
  readonly id: string;
  readonly pid: string;
  readonly kind: HumanRequestKind;
  readonly prompt: string;
  readonly status: HumanRequestStatus;
  readonly details: Readonly<Record<string, unknown>>;
  /** The human's answer: text for a question; `{decision}` for a permission. */
  readonly response: Readonly<Record<string, unknown>> | null;
  readonly createdAt: string;
  readonly answeredAt: string | null;
}

/** The durable human request queue (provided by the kernel as `human`). */
export interface HumanService {
  create(pid: string, req: { readonly kind: HumanRequestKind; readonly prompt: string; readonly details?: Readonly<Record<string, unknown>> }): Promise<HumanRequest>;
  get(id: string): Promise<HumanRequest | null>;
}
