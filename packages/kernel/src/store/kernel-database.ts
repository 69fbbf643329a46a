import type { Generated, Kysely, Transaction } from 'kysely';
import type { HumanRequestKind, HumanRequestStatus, ProcessStatus } from '@libos/sdk';

/*
 * The kernel's tables as its migrations create them (`kernel-schema.ts`, `migrate.ts`, and the sets of
 * `context/context-store.ts` and `plugins/store-plugins.ts`), one interface per table in kysely's style. Types are
 * what SQLite hands back through better-sqlite3: INTEGER as `number` (the store never turns on safe integers), TEXT
 * as `string`, JSON columns as their text (parse on read, stringify on write), a column without NOT NULL as `| null`.
 * `Generated<>` marks a column the store fills in (an autoincrement `seq`, a DEFAULT), optional on insert.
 * A plugin's tables are not here: each plugin types its own.
 */

/** `processes`: one row per AgentProcess, live or ended. */
export interface ProcessesTable {
  pid: string;
  parent_pid: string | null;
  image_id: string;
  /** Written only through `transition` (and spawn, fork, restore), so always one of the process statuses. */
  status: ProcessStatus;
  /** JSON text of the wait (`WaitState`), null when not waiting. */
  wait_state: string | null;
  /** Mirrors of `wait_state` for the wait index (`processes/wait-columns.ts`); added by 0006. */
  wait_kind: string | null;
  wait_deadline: string | null;
  /** JSON text of the exit outcome, null while live. */
  outcome: string | null;
  state_generation: number;
  revision: number;
  goal: string;
  goal_oid: string | null;
  /** JSON text: the callable tool names. */
  tool_table: string;
  /** JSON text: loaded Skills by name (`LoadedSkill`). */
  loaded_skills: string;
  working_directory: string;
  llm_profile_id: string | null;
  created_at: string;
  updated_at: string;
  /** The root of the process's tree (itself for a root); added by 0010. Many hosts lease whole trees (`hosts/`). */
  root_pid: string | null;
}

/** `events`: the durable event log (append-only). */
export interface EventsTable {
  seq: Generated<number>;
  id: string;
  ts: string;
  pid: string | null;
  type: string;
  /** JSON text. */
  data: string;
}

/** `audit_records`: the audit log (append-only). */
export interface AuditRecordsTable {
  seq: Generated<number>;
  id: string;
  ts: string;
  actor: string;
  action: string;
  target: string | null;
  decision: string | null;
  call_id: string | null;
  /** JSON text. */
  details: string;
}

/** `pending_actions`: one saved blocked call per process, resumed without a new model call. */
export interface PendingActionsTable {
  pid: string;
  resume_token: string;
  call_id: string;
  tool: string;
  /** JSON text of the arguments. */
  args: string;
  /** JSON text of the `WaitSpec`. */
  wait: string;
  /** `pending`, or `resuming` while a resumption runs. */
  status: 'pending' | 'resuming';
  created_at: string;
  updated_at: string;
}

/** `process_messages`: each process's mailbox. */
export interface ProcessMessagesTable {
  seq: Generated<number>;
  id: string;
  recipient_pid: string;
  sender: string;
  channel: string;
  kind: string;
  delivery: 'normal' | 'interrupt';
  /** JSON text. */
  payload: string;
  /** A restore marks the messages sent after its checkpoint `superseded_by_restore` (kept as history). */
  status: 'unread' | 'acked' | 'superseded_by_restore';
  created_at: string;
  acked_at: string | null;
  /** Added by 0003 with DEFAULT ''. */
  subject: Generated<string>;
  body: Generated<string>;
  correlation_id: string | null;
  reply_to: string | null;
  /** JSON text of the sender's `DataLabels`; added by 0004, null on older rows. */
  labels: string | null;
}

/** `human_requests`: questions and approvals waiting for a human. */
export interface HumanRequestsTable {
  seq: Generated<number>;
  id: string;
  pid: string;
  kind: HumanRequestKind;
  prompt: string;
  /** JSON text. */
  details: string;
  status: HumanRequestStatus;
  /** JSON text, null until answered. */
  response: string | null;
  created_at: string;
  answered_at: string | null;
}

/** `llm_calls`: one row per model call. */
export interface LlmCallsTable {
  seq: Generated<number>;
  id: string;
  pid: string;
  image_id: string;
  purpose: string;
  status: 'ok' | 'error';
  provider: string;
  model: string;
  /** JSON text: the request, its paragraphs and their groups stored by hash in `llm_texts` (older rows: inline). */
  request: string;
  /** JSON text, null when the call failed. */
  response: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  latency_ms: number;
  error: string | null;
  created_at: string;
  /** Added by 0008. */
  input_estimate_tokens: number | null;
}

/** `process_runners`: host-managed runners (ObjectTasks), each carrying one saved call. */
export interface ProcessRunnersTable {
  pid: string;
  operation_id: string;
  observer: string;
  tool: string;
  created_at: string;
}

/** `llm_texts`: prompt paragraphs and groups of paragraph keys stored once, by sha256 (hex before K-9.10) (0007). */
export interface LlmTextsTable {
  sha256: string;
  text: string;
}

/** `libos_meta` (`migrate.ts`): key/value facts about the store, e.g. `schema_version`. */
export interface LibosMetaTable {
  key: string;
  value: string;
}

/** `libos_hosts` (0010): the runtime hosts that share this store, each with its last heartbeat. */
export interface LibosHostsTable {
  host_id: string;
  hostname: string;
  os_pid: number;
  /** The runtime instance of the host's current open (`ServiceScope.runtime`): what holds its runtime-local payloads. */
  instance_id: string;
  started_at: string;
  heartbeat_at: string;
}

/** `libos_tree_leases` (0010): which host runs a process tree, until when; `gen` counts hand-overs. */
export interface LibosTreeLeasesTable {
  root_pid: string;
  /** Null: no host has claimed the tree yet. */
  host_id: string | null;
  lease_until: string;
  gen: number;
}

/** `libos_migrations` (`migrate.ts`): the migrations applied, per owner. */
export interface LibosMigrationsTable {
  owner: string;
  name: string;
  applied_at: string;
}

/** `llm_contexts` (`context/context-store.ts`): the durable half of each process's LLM context. */
export interface LlmContextsTable {
  pid: string;
  generation: string;
  oid: string | null;
  /** JSON text of `DataLabels`. */
  labels: string;
  /** JSON text of `PressureState`. */
  pressure: string;
  created_at: string;
  updated_at: string;
}

/** `libos_plugins` (`plugins/store-plugins.ts`): the plugins a store was opened with. */
export interface LibosPluginsTable {
  name: string;
  version: string;
  /** JSON text arrays of what the plugin contributed. */
  skills: string;
  tools: string;
  images: string;
  first_loaded_at: string;
  last_loaded_at: string;
}

/**
 * Every table the kernel's migrations create, for `Kysely<KernelDatabase>`.
 *
 * @example
 * declare const db: Kysely<KernelDatabase>;
 * const row = await db.selectFrom('processes').select(['pid', 'status']).where('pid', '=', 'pid_1').executeTakeFirst();
 */
export interface KernelDatabase {
  processes: ProcessesTable;
  events: EventsTable;
  audit_records: AuditRecordsTable;
  pending_actions: PendingActionsTable;
  process_messages: ProcessMessagesTable;
  human_requests: HumanRequestsTable;
  llm_calls: LlmCallsTable;
  process_runners: ProcessRunnersTable;
  llm_texts: LlmTextsTable;
  libos_meta: LibosMetaTable;
  libos_migrations: LibosMigrationsTable;
  llm_contexts: LlmContextsTable;
  libos_plugins: LibosPluginsTable;
  libos_hosts: LibosHostsTable;
  libos_tree_leases: LibosTreeLeasesTable;
}

/** A handle on the kernel's tables: the root store or any transaction begun from it. */
export type KernelStore = Kysely<KernelDatabase>;

/** A transaction on the kernel's tables (what `TxScope.store` is). */
export type KernelTransaction = Transaction<KernelDatabase>;

/** The kernel's table names. */
export type KernelTable = keyof KernelDatabase;
