// Long file: the service contracts the kernel and plugins code against, one interface per service, read together.
import type { ErrorPayload } from './errors.js';
import type { DataLabels } from './labels.js';
import type { Right } from './rights.js';
import type { SavedCallWait, WaitSpec } from './waits.js';

/**
 * Service interfaces: how the kernel and plugins reach each other without importing each other.
 * A plugin provides an implementation under a well-known name (`SERVICE_NAMES`); the kernel and other
 * plugins resolve it with `scope.service<T>(name)`, bound to the current transaction.
 */
export const SERVICE_NAMES = {
  objects: 'objects',
  processes: 'processes',
  human: 'human',
  runners: 'runners',
  mailbox: 'mailbox',
  results: 'results',
  llmContext: 'llm_context',
  subtreeState: 'subtree_state',
  files: 'files',
  objectPins: 'object_pins',
  sinks: 'sinks',
} as const;

/** An object created by the host on behalf of a process (goals, tool results, exit results). */
export interface HostObjectInput {
  readonly type: string;
  readonly payload: unknown;
  readonly name?: string;
  readonly namespace?: string;
  readonly immutable?: boolean;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Objects the new one is derived from: each must be live (`parent_not_found`), and its labels flow into the new one. */
  readonly parentOids?: readonly string[];
  /**
   * Objects the creating flow observed (`FlowContext.sources()`): recorded in provenance after `parentOids`, neither
   * looked up nor checked, since one may have been released after it was read (a child's result, say) and the flow's
   * labels, which the caller passes as `labels`, already cover what was read. A process reads many Objects and
   * publishes a result every turn, so a create lists only those its process's previous Object does not already carry
   * and names that Object (`provenance.parents_from`; the objects service's `inspect` shows the parents in full).
   *
   * Only Object ids are kept (a flow's sources may name messages and other things too).
   *
   * @example
   * declare const objects: ObjectsService;
   * declare const pid: string, labels: DataLabels, observed: readonly string[]; // a call's ctx.flow.labels(), .sources()
   * await objects.createForProcess(pid, { type: 'summary', payload: { ok: true }, labels, sourceOids: observed });
   */
  readonly sourceOids?: readonly string[];
  readonly labels?: Partial<DataLabels>;
  /** Attach the new handle as a root of the owner's MemoryView (default true). */
  readonly attachToView?: boolean;
  /**
   * Create `namespace` if it is missing, as a direct child of the owner's process scope (`process:<pid>/<name>`),
   * granting the owner read/write/admin on it. Refused for any other namespace.
   */
  readonly ensureNamespace?: boolean;
  /**
   * Record another owner than the process (e.g. an ObjectTask's result: `{ kind: 'object_task', id: task_id }`).
   * The creator handle then goes to that owner id, not to the process; the process still names the namespace
   * scope and (unless `attachToView: false`) the MemoryView the new handle is rooted in.
   */
  readonly owner?: { readonly kind: 'object_task'; readonly id: string };
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
  /** Identity of an object (live or payload-unavailable), its owner and labels, or null. */
  describe(oid: string): Promise<ObjectDescriptionRef | null>;
  /**
   * The live (or payload-unavailable) Object holding `name` in `namespace`, or null. Host lookup: no rights checked.
   *
   * @example
   * import { namespaces } from '@libos/sdk';
   * const owner = await objects.lookup(namespaces.process(pid), 'ledger');
   */
  lookup(namespace: string, name: string): Promise<ObjectRef | null>;
  /** The pid's MemoryView roots in order (oid and the handle's capability id, if any). */
  viewRoots(pid: string): Promise<readonly { readonly oid: string; readonly capabilityId: string | null }[]>;
  /** Renders the pid's MemoryView for the LLM prompt (only roots the pid may `materialize`). */
  renderView(pid: string, opts?: { readonly tokenBudget?: number }): Promise<RenderedView>;
  /**
   * Host write: replaces the payload of a live mutable Object whose version is still `expectedVersion` (a
   * compare-and-swap), bumping its version by one; labels only ever join (never lower), `tags` are added to its
   * metadata. `version_conflict` when the version moved, `object_not_found`, `payload_unavailable_after_reopen`,
   * `object_immutable`, `payload_too_large`: nothing changes then. No rights are checked (the kernel's own writes).
   *
   * @example
   * const ref = await objects.replacePayload(oid, { entries: [] }, { expectedVersion: 3, tags: ['compacted'] }); // ref.version === 4
   */
  replacePayload(
    oid: string,
    payload: unknown,
    opts: {
      readonly expectedVersion: number;
      readonly labels?: Partial<DataLabels>;
      readonly tags?: readonly string[];
      readonly action?: string;
    },
  ): Promise<ObjectRef>;
  /**
   * Host link `src -relation-> dst` between two live Objects (no rights checked; the caller checked `link`). Emits
   * `object_linked` `{oid: src, dst_oid, relation, link_id, version}` (an owner watch's `linked`); the source's version
   * does not change. `object_not_found` for a missing end.
   *
   * @example
   * const [ownerOid, resultOid, task_id] = ['obj_owner', 'obj_result', 'task_1'];
   * const { link_id } = await objects.link(ownerOid, resultOid, 'produced', { task_id });
   */
  link(
    srcOid: string,
    dstOid: string,
    relation: string,
    metadata?: Readonly<Record<string, unknown>>,
  ): Promise<{ readonly link_id: string }>;
  /** Links whose source is `oid`, oldest first. */
  linksFrom(oid: string): Promise<readonly ObjectLink[]>;
  /**
   * The merge of an ended process's memory: when `pid` is terminal and nobody will merge it any more (it is a root, or
   * its parent has ended too), its process-owned Objects are released (names freed, payloads dropped) and so are
   * those of its ended descendants, except exit results (`process_result`) and Objects an active task pins. Otherwise
   * nothing changes. Returns the released oids.
   */
  releaseEnded(pid: string): Promise<readonly string[]>;
}

/** What `ObjectsService.describe` tells about an Object. */
export interface ObjectDescriptionRef extends ObjectRef {
  readonly labels: DataLabels;
  readonly payloadAvailable: boolean;
  /** `process` (a pid), `process_result` (an ended pid's exit result), `object_task` (a task id) or `runtime`. */
  readonly ownerKind: string;
  readonly ownerId: string;
}

/** A link between two Objects (`ObjectsService.link`). */
export interface ObjectLink {
  readonly link_id: string;
  readonly src_oid: string;
  readonly dst_oid: string;
  readonly relation: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly created_at: string;
}

/**
 * Objects that must outlive their owner's end (provided as `object_pins` by the plugin that pins them, e.g. ObjectTasks
 * for the owner of an active task). Object Memory asks it before releasing an ended process's memory.
 */
export interface ObjectPinsService {
  /** The subset of `oids` that is pinned now. */
  pinned(oids: readonly string[]): Promise<ReadonlySet<string>>;
}

/**
 * Files a process may read and write under its `fs:` grants (provided as `files` by the workspace plugin): paths are
 * resolved against the process's working directory with every symbolic link followed before the check, the check is
 * on the real path, and writes are atomic and audited.
 *
 * @example
 * const files = scope.service<FilesService>(SERVICE_NAMES.files);
 * const w = await files.writeText(pid, 'out/report.md', '# Report', { field: 'path' });
 */
export interface FilesService {
  /** Reads a UTF-8 text file (`read` on `fs:<real path>`); at most `maxBytes` (default 1,000,000). */
  readText(pid: string, path: string, opts?: { readonly field?: string; readonly maxBytes?: number }): Promise<FileText>;
  /** Creates or replaces a UTF-8 text file atomically (`write` on `fs:<real path>`); `create_parents` false by default. */
  writeText(
    pid: string,
    path: string,
    content: string,
    opts?: { readonly field?: string; readonly mode?: 'create_or_overwrite' | 'create' | 'overwrite' },
  ): Promise<FileWriteReceipt>;
}

export interface FileText {
  /** The real path read (every link followed). */
  readonly path: string;
  readonly content: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface FileWriteReceipt {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly created: boolean;
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
  /** A terminal process's outcome (`{kind, result_oid?, code?}`), else null. */
  readonly outcome?: Readonly<Record<string, unknown>> | null;
}

/** A host-side child spawn (`ProcessService.spawnChild`): the caller has checked the authority it needs. */
export interface ChildSpawnRequest {
  /** A registered image id. */
  readonly image: string;
  /** The goal text (its goal Object's payload). */
  readonly goal: string;
  /** Labels of what the parent hands the child: its goal Object carries them and its flow starts at them. */
  readonly labels?: DataLabels;
}

/** A blocked call saved durably (`ProcessService.savedCalls`). */
export interface SavedCall {
  readonly pid: string;
  readonly tool: string;
  readonly callId: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly wait: SavedCallWait;
  readonly status: 'pending' | 'resuming';
}

/**
 * A message a human (`sender` starting with `human:`) posted to a process, with its current status. `status` moves
 * from `unread` to `acked` once; every other field is immutable.
 */
export interface HumanMessage {
  readonly message_id: string;
  readonly status: 'unread' | 'acked';
  readonly sender: string;
  /** The recipient pid (snake_case, like `ProcessMessage.recipient_pid`: this is a message payload). */
  readonly recipient_pid: string;
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
   * Spawns a direct child of `parentPid` in the caller's transaction, as `spawn_child_process` does once authorized:
   * a budget carved from the parent's remaining (half by default, charged up the ancestor chain), a goal Object, the
   * image's default Skills, no grants. `resource_limit_exceeded` when the parent has no child budget left.
   *
   * @example
   * const { pid } = await processes.spawnChild(ctx.pid, { image: 'context-compressor:v0', goal: JSON.stringify({ stage_index: 1 }) });
   */
  spawnChild(parentPid: string, req: ChildSpawnRequest): Promise<{ readonly pid: string; readonly goalOid: string | null }>;
  /**
   * What the last recorded model reply of `pid` passed to `process_exit` as `payload` (from its retained full-I/O
   * `llm_calls`), or `{ found: false }` when no such record survives (full I/O off, or no exit call recorded).
   */
  recordedExitPayload(pid: string): Promise<{ readonly found: boolean; readonly payload?: unknown }>;
  /** Every saved waiting call of `tool`, across processes (e.g. a plugin's reopen hook rebuilding what its waits need). */
  savedCalls(tool: string): Promise<readonly SavedCall[]>;
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

/**
 * The durable human request queue (provided by the kernel as `human`). `create` first clears the pid's flow labels
 * for the sink `human:<details.human ?? 'owner'>:<kind>`: a human not cleared for them is `egress_denied`, and
 * nothing is queued.
 */
export interface HumanService {
  create(
    pid: string,
    req: { readonly kind: HumanRequestKind; readonly prompt: string; readonly details?: Readonly<Record<string, unknown>> },
  ): Promise<HumanRequest>;
  get(id: string): Promise<HumanRequest | null>;
  /**
   * Delivers a message from `pid` to a human operator, in the caller's transaction: clears the pid's flow labels for
   * the sink `human:<human>:output` (else `egress_denied`, nothing delivered), then emits the durable
   * `human_output` event (it carries the text: `libos events` and the server's SSE show it) and the
   * `human.output` audit (sizes and a hash, never the text). The caller checks `human:<human>` write first.
   *
   * @example
   * await scope.service<HumanService>(SERVICE_NAMES.human).output(pid, { human: 'owner', text: 'Report ready.' });
   */
  output(pid: string, out: HumanOutputInput): Promise<HumanOutputReceipt>;
}

/** What a process tells a human operator (`HumanService.output`). */
export interface HumanOutputInput {
  /** The recipient's name: the sink is `human:<human>:output`. */
  readonly human: string;
  readonly text: string;
  /** What the text is, for the operator's display: `info` (default), `progress`, `result` or `warning`. */
  readonly kind?: HumanOutputKind;
  /** Labels of the text beyond the pid's flow high-water (e.g. a tool call's observations); joined, never lowering it. */
  readonly labels?: DataLabels;
}

export type HumanOutputKind = 'info' | 'progress' | 'result' | 'warning';

export interface HumanOutputReceipt {
  readonly output_id: string;
  readonly human: string;
  readonly sink: string;
  readonly chars: number;
  readonly sha256: string;
  readonly delivered_at: string;
}

/**
 * The kernel's one sink clearance, for a plugin tool that sends data out of the runtime (provided by the kernel as
 * `sinks`): may data with these labels leave `pid` for `sink` (e.g. `mcp:<server>/<tool>`) under the host's sink
 * rules? `clear` answers the decision when it is `allow`; otherwise it throws `egress_denied` naming the sink, the
 * labels, the rule and the reason, and the tool must send nothing. An unmatched sink is untrusted: normal data at
 * most. The decision is audited payload-free (`data_flow.decision`). Clearance never replaces a capability check.
 *
 * @example
 * const labels = await ctx.flow.labels();
 * await ctx.service<SinksService>(SERVICE_NAMES.sinks).clear(ctx.pid, 'mcp:weather/forecast', { labels, field: 'arguments' });
 */
export interface SinksService {
  clear(pid: string, sink: string, opts?: SinkClearOptions): Promise<SinkClearance>;
}

export interface SinkClearOptions {
  /** Labels of the data; default: the pid's flow high-water (everything it has observed). */
  readonly labels?: DataLabels;
  /** The argument that carries the data, named first in the error (e.g. `arguments`). */
  readonly field?: string;
  /** sha256 of the exact payload: lets a bound one-shot `data_release:<sink>` release a conditional sink once. */
  readonly payloadSha256?: string;
}

/** A clearance that let the data go (payload-free). */
export interface SinkClearance {
  readonly sink: string;
  readonly decision: 'allow';
  /** The sink rule that cleared it, or null for an unmatched sink (normal data at most). */
  readonly rule: string | null;
  readonly reason: string;
  readonly labelsSha256: string;
  /** The one-shot release spent, when a conditional sink needed one. */
  readonly releaseCapId?: string;
}

/** A tool as a runner would call it: its name, owning Skill and policy. */
export interface RunnerToolInfo {
  readonly name: string;
  readonly skill: string;
  /** The tool changes state outside its transaction (ToolPolicy.sideEffects). */
  readonly sideEffects: boolean;
}

/** One grant a runner starts with: issued by the host (e.g. read/materialize on its owner Object). */
export interface RunnerGrant {
  readonly resource: string;
  readonly rights: readonly Right[];
}

/** One exact spec a runner inherits from its creator, checked as a delegation of a live delegable grant. */
export interface RunnerInheritSpec {
  readonly resource: string;
  readonly rights: readonly string[];
  readonly constraints?: Readonly<Record<string, unknown>>;
}

export interface RunnerSpawnRequest {
  /** The creator: the runner becomes its direct child, with a budget carved from it. */
  readonly creatorPid: string;
  /** What the runner works for (an ObjectTask's id). Waits and hooks name it. */
  readonly operationId: string;
  /** Name of the service (a `RunnerObserver`) the kernel tells, in the same transaction, how the call went. */
  readonly observer: string;
  /** The one tool: the runner's tool table is exactly `[tool]`. */
  readonly tool: string;
  /** Arguments, validated against the tool's input (`validateArgs`); saved with the call, never in the caller's rows. */
  readonly args: Readonly<Record<string, unknown>>;
  readonly goal: string;
  readonly grants: readonly RunnerGrant[];
  readonly inherit: readonly RunnerInheritSpec[];
}

/** A runner process as its observer knows it. */
export interface RunnerRef {
  readonly pid: string;
  readonly operationId: string;
  readonly tool: string;
}

/** What a runner's saved call came to, told to its observer inside the call's transaction. */
export type RunnerOutcome =
  | {
      readonly kind: 'succeeded';
      readonly callId: string;
      readonly payload: unknown;
      readonly labels: DataLabels;
      readonly sourceOids: readonly string[];
    }
  | { readonly kind: 'failed'; readonly callId: string; readonly error: ErrorPayload }
  | { readonly kind: 'waiting'; readonly callId: string; readonly wait: WaitSpec };

/**
 * Provided by a plugin that starts runners (under the name it passes as `RunnerSpawnRequest.observer`). The kernel
 * calls it in the transaction of the event, so a settlement commits (or rolls back) with the call itself.
 */
export interface RunnerObserver {
  /** The saved call is about to run (first run, or a resume after a wait). */
  started(runner: RunnerRef): Promise<void>;
  /** The call returned, failed, or parked in a wait. A success or failure should end the runner (`RunnerService.end`). */
  settled(runner: RunnerRef, outcome: RunnerOutcome): Promise<void>;
  /** The runner process ended, for whatever reason (its own settlement, a kill, an ancestor's end, a reopen). */
  ended(runner: RunnerRef, status: 'exited' | 'failed' | 'killed', outcome: Readonly<Record<string, unknown>> | null): Promise<void>;
}

/** How a runner ends (`RunnerService.end`). */
export type RunnerEnd =
  | { readonly kind: 'exited'; readonly resultOid: string | null }
  | { readonly kind: 'failed'; readonly code: string; readonly message: string }
  | { readonly kind: 'killed'; readonly code: string; readonly reason: string };

/** A runner's current process state. */
export interface RunnerState {
  readonly pid: string;
  readonly parentPid: string | null;
  readonly operationId: string;
  readonly tool: string;
  readonly status: string;
  readonly waitState: Readonly<Record<string, unknown>> | null;
  readonly outcome: Readonly<Record<string, unknown>> | null;
  readonly toolTable: readonly string[];
  /** The wait of its saved call (`{kind:'tool', operation_id}` until it first runs), or null when it holds none. */
  readonly savedCallWait: Readonly<Record<string, unknown>> | null;
}

/**
 * Host-managed runner processes (provided by the kernel as `runners`): one saved tool call in a child of its
 * creator, run by the scheduler without a model call, through the ToolBroker under the runner's own pid.
 *
 * @example
 * const runners = scope.service<RunnerService>(SERVICE_NAMES.runners);
 * const info = await runners.resolveTool(pid, 'get_current_time');
 * const args = runners.validateArgs(info.name, {});
 * const { pid: runner } = await runners.spawn({
 *   creatorPid: pid, operationId: 'op_1', observer: 'object_tasks', tool: info.name, args, goal: '…', grants: [], inherit: [],
 * });
 */
export interface RunnerService {
  /**
   * The tool as `callerPid` sees it: `tool_not_found` when no plugin defines it, `tool_not_in_process_table` when the caller cannot see it.
   */
  resolveTool(callerPid: string, tool: string): Promise<RunnerToolInfo>;
  /** Parses arguments against the tool's zod input: the parsed object, or `invalid_arguments` naming every bad field. */
  validateArgs(tool: string, args: unknown): Record<string, unknown>;
  /**
   * Spawns the runner (child budget, host grants, checked delegations, one tool, the saved call) in the caller's
   * transaction. `resource_limit_exceeded`, `delegation_denied`, `capability_invalid`… leave nothing behind once the
   * transaction rolls back.
   */
  spawn(req: RunnerSpawnRequest): Promise<{ readonly pid: string; readonly callId: string }>;
  /** The runner's state, or null when `pid` is not a runner. */
  get(pid: string): Promise<RunnerState | null>;
  /** Ends a live runner (a no-op once it is terminal). Returns whether it ended it. */
  end(pid: string, how: RunnerEnd): Promise<boolean>;
  /** Wakes every process parked in a `{kind:'task', task_id}` wait for this task. Returns their pids. */
  wakeTaskWaiters(taskId: string): Promise<readonly string[]>;
}

/** A tool's result to publish as an immutable `tool_result` Object (`ResultsService.publish`). */
export interface ToolResultInput {
  /** The process whose `process:<pid>/tool_results` namespace (created if missing) holds the Object. */
  readonly pid: string;
  readonly name: string;
  readonly title: string;
  /** Fields recorded beside the result (e.g. `tool` and `call_id`, or `task_id` and `tool_name`). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** The field the result goes under when it is published whole (e.g. `payload`, `result`). */
  readonly resultField: string;
  readonly result: unknown;
  /** What the call observed: the result's labels never fall below them, and its sources become parent Objects. */
  readonly labels: DataLabels;
  readonly sourceOids: readonly string[];
  /** Root the Object in the pid's MemoryView (default true). */
  readonly attachToView?: boolean;
  readonly owner?: HostObjectInput['owner'];
}

/**
 * The one publisher of tool results (provided by the kernel as `results`), used by the ToolBroker for a model's calls
 * and by ObjectTasks for a task's result. A result over 100,000 characters of JSON is published as its
 * digest and a preview (`truncated: true, result_sha256, result_bytes, result_chars, preview`), never whole.
 */
export interface ResultsService {
  publish(input: ToolResultInput): Promise<ObjectRef>;
}

/** A message the host posts on behalf of a subsystem (e.g. an ObjectTask's notification). */
export interface HostMessage {
  readonly recipientPid: string;
  /** e.g. `object_task:<task_id>`. */
  readonly sender: string;
  readonly channel: string;
  readonly kind?: string;
  readonly delivery?: 'normal' | 'interrupt';
  readonly subject?: string;
  readonly body?: string;
  readonly correlationId?: string;
  readonly payload: unknown;
  /** Labels the content carries; a reader's flow takes them on. */
  readonly labels?: DataLabels;
}

/**
 * The process mailbox for host code (provided by the kernel as `mailbox`). `post` wakes a recipient waiting for a
 * matching message, in the caller's transaction. A missing recipient is `process_not_found`, a terminal one
 * `invalid_state`; labels the sink `process:<recipient>` is not cleared for are `egress_denied` (nothing posted).
 */
export interface MailboxService {
  post(message: HostMessage): Promise<{ readonly message_id: string }>;
}

/** What the kernel keeps durably about one process's LLM context Object (it outlives the Object's payload). */
export interface LlmContextState {
  readonly pid: string;
  /** The current context Object, or null before the first quantum that enabled it. */
  readonly oid: string | null;
  /** Opaque; changes when the context is compacted (or restored), never on an ordinary append. Null before the first. */
  readonly generation: string | null;
  /** The label high-water of everything that entered the context: it never goes down, not across compaction or reopen. */
  readonly labels: DataLabels;
}

/** A compacted payload to write over a context Object (`LlmContextService.writeCompacted`). */
export interface LlmContextWriteback {
  readonly pid: string;
  /** The context Object the compaction read. */
  readonly contextOid: string;
  /** Its version when the compaction started: the write is a compare-and-swap on it. */
  readonly sourceVersion: number;
  /** The payload the compaction read (re-created under the same name when the Object is gone after a reopen). */
  readonly sourcePayload: unknown;
  /** The compacted payload. */
  readonly payload: unknown;
  /** Labels of what the compaction added (the summaries): joined into the context's, never lowering them. */
  readonly labels?: DataLabels;
  /** Tags to add to the Object's metadata (e.g. `compacted`). */
  readonly tags?: readonly string[];
}

export interface LlmContextWriteResult {
  readonly oid: string;
  readonly oldVersion: number;
  readonly version: number;
  readonly generation: string;
  /** True when the Object was gone (a reopen) and was re-created from the source payload before the write. */
  readonly recreated: boolean;
}

/**
 * The kernel's LLM context Objects (provided by the kernel as `llm_context`): `llm_context:<pid>` in the process's
 * namespace, appended to by the executor each quantum, read by the compaction tool.
 *
 * @example
 * const contexts = ctx.service<LlmContextService>(SERVICE_NAMES.llmContext);
 * const text = contexts.render(await objects.readPayload(oid)); // starts with 'LLM context object:'
 */
export interface LlmContextService {
  /** The Object name of `pid`'s context: `llm_context:<pid>`. */
  objectName(pid: string): string;
  /** The durable state of `pid`'s context (generation, label high-water, current oid). */
  state(pid: string): Promise<LlmContextState>;
  /** The prompt text of a context payload (the `LLM context object:` heading, the static prefix, every entry). */
  render(payload: unknown): string;
  /** The context token estimate: max(1, floor(characters / 4)). */
  estimateTokens(text: string): number;
  /**
   * Writes a compacted payload over the context in the caller's transaction: a compare-and-swap on `sourceVersion`
   * (`version_conflict` "LLM context changed during compaction: expected version X, found Y" otherwise, with nothing
   * changed), the version + 1, the labels joined, and a new generation, all or nothing. A context Object gone after
   * a reopen is re-created from `sourcePayload` first, unless another context Object took its name (a conflict).
   */
  writeCompacted(w: LlmContextWriteback): Promise<LlmContextWriteResult>;
}
