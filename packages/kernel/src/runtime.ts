// Long file: the Runtime class is the host's whole API; each method is short and delegates to its module.
import { dirname } from 'node:path';
import type { KyselyPlugin } from 'kysely';
import {
  CAPABILITY_SERVICE_NAME,
  completeLabels,
  createAuthorityEngine,
  UNCLASSIFIED_EXTERNAL_LABELS,
  type AuthorityEngine,
  type BudgetLimits,
  type CapabilityRecord,
} from '@libos/capabilities';
import {
  LibosError,
  randomIds,
  systemClock,
  type AnyTool,
  type AuditEntry,
  type Clock,
  type EmittedEvent,
  type GrantSpec,
  type BudgetField,
  type HumanRequest,
  type HumanRequestStatus,
  type ImageDefinition,
  type Usage,
  type IdSource,
  type Plugin,
  type Right,
  type ServiceFactory,
  type ServiceScope,
} from '@libos/sdk';
import { resources } from '@libos/sdk';

const CAPABILITIES_PLUGIN = '@libos/capabilities';
import type { ToolCallResult } from './broker/tool-result.js';
import { callTool } from './broker/tool-broker.js';
import {
  hostConfigForStore,
  parseHostConfig,
  resolveLlmProfile,
  type HostConfig,
  type HostConfigInput,
  type LlmProfile,
} from './config/host-config.js';
import { EventBus, type AuditRecord, type RuntimeEvent } from './events/event-bus.js';
import { queryAudit, queryEvents, type AuditQuery, type EventQuery } from './events/queries.js';
import { BUILTIN_IMAGES } from './images/builtin-images.js';
import type { KernelDeps } from './internal/kernel-deps.js';
import { loadPlugins } from './plugins/load-plugins.js';
import { importPluginSpecs, pluginSourceOf, setPluginSource } from './plugins/plugin-specs.js';
import { assertStorePlugins, recordStorePlugins } from './plugins/store-plugins.js';
import { toolJsonSchema } from './plugins/tool-schemas.js';
import type { ProcessInfo } from './processes/process-record.js';
import { findProcess, getProcess, listProcesses } from './processes/process-store.js';
import { spawnProcess, type SpawnOptions } from './processes/spawn.js';
import { loadSkillOnProcess, skillNavigationPlugin } from './skills/skill-navigation.js';
import { childProcessesPlugin } from './children/child-processes-plugin.js';
import { agentImagesPlugin } from './images/exec-process.js';
import { kernelServices } from './services/kernel-services.js';
import { resolveHostOptions, SharedHost, type HostOptions } from './hosts/shared-host.js';
import { Scheduler, type RunOptions, type RunReport } from './scheduler/run-until-idle.js';
import { recoverOnOpen } from './store/recover-on-open.js';
import { answerHuman, cancelHuman, type HumanAnswer } from './human/answer-human.js';
import { listHumanRequests } from './human/human-queue.js';
import { queryLlmCalls, type LlmCallRecord } from './executor/llm-calls.js';
import { CommittedTexts } from './executor/committed-texts.js';
import { SeenTexts } from './executor/prompt-texts.js';
import { assertMessagePayload, queryMessages, type Delivery } from './mailbox/messages.js';
import { postMessage } from './mailbox/post-message.js';
import { endProcess } from './processes/exit.js';
import { transition } from './processes/transition.js';
import { migrate } from './store/migrate.js';
import { migrationKit } from './store/migration-kit.js';
import { storeMigrationSets } from './store/migration-sets.js';
import type { OpenedStore } from './store/opened-store.js';
import { EventFeed } from './store/postgres/event-feed.js';
import { openPostgresStore } from './store/postgres/open-postgres.js';
import { isPostgresUrl } from './store/postgres/postgres-url.js';
import { openSqliteStore } from './store/sqlite/open-sqlite.js';
import { clearSinkDurably } from './sinks/clear-sink.js';
import { messageFromWire } from './wire/wire.js';
import { inTransaction, type ScopeFactory, type TxScope } from './store/transaction.js';

export interface RuntimeConfig {
  /** Wall clock (inject a fake one in tests). */
  readonly clock?: Clock;
  readonly ids?: IdSource;
}

export interface OpenRuntimeOptions {
  /**
   * A SQLite file path, `':memory:'` for an ephemeral store, or a PostgreSQL URL (`postgres://` or `postgresql://`;
   * `?schema=name` picks the schema, `public` when none; `maxStorePages` does not apply there).
   */
  readonly path: string;
  /** Skill plugins to load (the kernel's own skill-navigation plugin is always loaded first). */
  readonly plugins?: readonly Plugin[];
  readonly config?: RuntimeConfig;
  /** Caps the SQLite store at this many 4 KiB pages: a write past it fails `disk_full`, as on a full disk. */
  readonly maxStorePages?: number;
  /**
   * The host config (validated here, before the store is opened: a bad key fails with nothing written). Omitted: the
   * `libos.config.json|yaml|yml` in the store's folder if there is one (`loadHostConfig`), else all defaults.
   */
  readonly hostConfig?: HostConfigInput;
  /**
   * Where the host config's `plugins` specs resolve from: default the config file's folder, or the working folder when
   * the config was given in code. Those plugins load after `plugins`.
   */
  readonly pluginBaseDir?: string;
  /**
   * Kysely plugins of the store's Kysely instance, as kysely's own `plugins` option: each sees every statement that the
   * kernel and the Skill plugins build with kysely (`transformQuery`, before it runs) and its result (`transformResult`),
   * inside the transaction that runs it. For instrumentation (statement logs, timings) and for fault injection in
   * tests: a `transformQuery` that throws fails that statement before it runs, and the call or transaction around it
   * fails as it would on a store error. Statements still run through the store adapter, so cached reads are dropped
   * on every write. Not seen: the append-only `events` and `audit_records` inserts and the savepoint statements,
   * which the adapter prepares itself.
   *
   * @example
   * import { InsertQueryNode, type KyselyPlugin } from 'kysely';
   * // Every message post fails before its row is written (the mailbox is "down").
   * const mailboxDown: KyselyPlugin = {
   *   transformQuery({ node }) {
   *     if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'process_messages') throw new Error('mailbox down');
   *     return node;
   *   },
   *   transformResult: async ({ result }) => result,
   * };
   * const runtime = await openRuntime({ path: ':memory:', kyselyPlugins: [mailboxDown] });
   */
  readonly kyselyPlugins?: readonly KyselyPlugin[];
  /**
   * Open as one of many runtime hosts on one PostgreSQL store (`hosts/shared-host.ts`): the host runs the process
   * trees it leases, others run theirs, and a dead host's trees are taken over once its lease runs out. Omitted: the
   * runtime holds the store's single writer lease (the SQLite default, or PostgreSQL for one host).
   *
   * @example
   * const rt = await openRuntime({ path: 'postgres://postgres@127.0.0.1/test?schema=agents', host: { id: 'host-a' } });
   */
  readonly host?: HostOptions;
}

/** A loaded plugin as `libos plugins` lists it: name, version, and the spec and file it came from (if any). */
export interface LoadedPluginInfo {
  readonly name: string;
  readonly version: string;
  /** `kernel` (always loaded), `host` (given as an object by the host), or `spec` (a package name or path). */
  readonly origin: 'kernel' | 'host' | 'spec';
  readonly spec: string | null;
  readonly file: string | null;
  readonly skills: readonly string[];
  readonly tools: number;
}

/** One entry of the Skill catalog. */
export interface SkillCatalogEntry {
  readonly skillId: string;
  readonly description: string;
  readonly tools: readonly string[];
  readonly plugin: string;
  readonly packageSha256: string;
  readonly path: string;
}

/** A tool as a model sees it: name, description and the JSON Schema generated from its zod input. */
export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

/**
 * A message of a process's mailbox as the Runtime returns it. A model reads the same message snake_case
 * (`ProcessMessage`, the `read_messages` payload); `wire.messageToWire` and `wire.messageFromWire` map between them.
 */
export interface MessageInfo {
  readonly messageId: string;
  readonly sender: string;
  readonly recipientPid: string;
  readonly channel: string;
  readonly kind: string;
  readonly delivery: Delivery;
  readonly subject: string;
  readonly body: string;
  readonly correlationId: string | null;
  readonly replyTo: string | null;
  readonly payload: unknown;
  readonly status: 'unread' | 'acked';
  readonly createdAt: string;
  readonly ackedAt: string | null;
}

/** A process's budget: its limits (null = none of its own), what it used, and what is left (min over its ancestors). */
export interface BudgetReport {
  readonly limits: BudgetLimits;
  readonly usage: Usage;
  readonly remaining: Partial<Record<BudgetField, number | null>>;
}

export interface GrantOptions {
  readonly uses?: number;
  readonly expiresAt?: string;
  readonly effect?: GrantSpec['effect'];
  readonly delegable?: boolean;
}

/**
 * A running libOS: one store, the loaded plugins, processes and the ToolBroker.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [objectMemory()] });
 * const p = await rt.spawn({ goal: 'Keep a ledger' });
 * const r = await rt.call(p.pid, 'discover_skills', {});
 * await rt.close();
 */
export class Runtime {
  /** Canonical store path, or ':memory:'. */
  readonly location: string;
  /** The file the host config came from, or null (given in code, or all defaults). */
  readonly hostConfigPath: string | null;
  readonly #deps: KernelDeps;
  readonly #store: OpenedStore;
  readonly #scheduler: Scheduler;
  readonly #shared: SharedHost | undefined;
  #closed = false;

  /** @internal use openRuntime */
  constructor(deps: KernelDeps, store: OpenedStore, hostConfigPath: string | null = null, shared?: SharedHost) {
    this.#deps = deps;
    this.#shared = shared;
    this.hostConfigPath = hostConfigPath;
    this.#store = store;
    this.location = store.location;
    this.#scheduler = new Scheduler(() => this.#live());
  }

  /** This runtime's host id when it is one of many hosts on a shared store (`openRuntime({ host })`), else null. */
  get hostId(): string | null {
    return this.#shared?.options.id ?? null;
  }

  get clock(): Clock {
    return this.#deps.clock;
  }

  /** The effective host config: every default filled in. */
  get hostConfig(): HostConfig {
    return this.#deps.hostConfig;
  }

  /**
   * A named LLM profile of the host config, or its `default_profile` when `name` is omitted (null if it names none).
   * An unknown name is `invalid_arguments` listing the configured ones.
   */
  llmProfile(name?: string): LlmProfile | null {
    return resolveLlmProfile(this.#deps.hostConfig, name);
  }

  /** The authority engine (host-side API: trusted issue, checked revoke, budgets, labels). */
  get authority(): AuthorityEngine {
    return this.#deps.engine;
  }

  #live(): KernelDeps {
    if (this.#closed) throw new LibosError('store_closed', `runtime on ${this.location} is closed`);
    return this.#deps;
  }

  /** Runs `fn` in one host transaction (state, events and audit commit together). */
  async transaction<T>(fn: (scope: TxScope) => Promise<T>, actor = 'host'): Promise<T> {
    const d = this.#live();
    return inTransaction(d.db, d.scopes, actor, null, fn);
  }

  /** Spawns a process from a registered image (default `base-agent:v0`); a root unless `parentPid` is given. */
  async spawn(opts: SpawnOptions): Promise<ProcessInfo> {
    return spawnProcess(this.#live(), opts);
  }

  /** Calls a tool as process `pid`, through the ToolBroker. Never throws for a tool failure: see the envelope. */
  async call(pid: string, tool: string, args: unknown = {}, opts: { signal?: AbortSignal } = {}): Promise<ToolCallResult> {
    return callTool(this.#live(), pid, tool, args, opts);
  }

  /**
   * Sink clearance for data the host delivers outside on `pid`'s behalf (e.g. an MCP tool result to `mcp:client`):
   * the pid's flow labels must fit the sink's rule, else `egress_denied` naming the sink, labels and rule. The one
   * kernel check every sink uses; its audit record commits either way.
   */
  async clearSink(pid: string, sink: string): Promise<void> {
    await getProcess(this.#live().db, pid);
    await clearSinkDurably(this.#live(), pid, sink, { field: 'result' });
  }

  async process(pid: string): Promise<ProcessInfo> {
    return getProcess(this.#live().db, pid);
  }

  async findProcess(pid: string): Promise<ProcessInfo | null> {
    return findProcess(this.#live().db, pid);
  }

  async processes(): Promise<ProcessInfo[]> {
    return listProcesses(this.#live().db);
  }

  /** Issues a grant to `pid` as the trusted host (the CLI's `libos grant`). */
  async grant(pid: string, resource: string, rights: readonly Right[], opts: GrantOptions = {}): Promise<CapabilityRecord> {
    await this.process(pid);
    return this.transaction((scope) =>
      this.#deps.engine.issueTrusted(
        scope,
        {
          subject: pid,
          resource,
          rights,
          ...(opts.effect ? { effect: opts.effect } : {}),
          ...(opts.uses !== undefined ? { usesRemaining: opts.uses } : {}),
          ...(opts.expiresAt ? { expiresAt: opts.expiresAt } : {}),
          ...(opts.delegable !== undefined ? { delegable: opts.delegable } : {}),
        },
        'host',
      ),
    );
  }

  /** Revokes a grant as the host. */
  async revoke(capId: string): Promise<void> {
    return this.transaction((scope) => this.#deps.engine.revoke(scope, 'host', capId));
  }

  /** Grants held by `pid` (active and valid by default). */
  async capabilities(pid: string, opts: { includeInactive?: boolean } = {}): Promise<CapabilityRecord[]> {
    await this.process(pid);
    return this.transaction((scope) => this.#deps.engine.list(scope, pid, opts));
  }

  /** Budget limits, usage and remaining of `pid`. */
  async budget(pid: string): Promise<BudgetReport> {
    await this.process(pid);
    return this.transaction((scope) => this.#deps.engine.budgets(scope).usage(pid));
  }

  /** Loads a Skill onto a process as the host (no `skill:<id>` check; the model's path is `activate_skill`). */
  async activateSkill(pid: string, skillId: string): Promise<ProcessInfo> {
    return this.transaction(async (scope) => {
      const r = await loadSkillOnProcess(scope.store, this.#deps.registry, pid, skillId, this.clock.now().toISOString());
      if (!r.alreadyActive) {
        await scope.events.emit('skill_loaded', { pid, skill_id: skillId, package_sha256: r.manifest.packageSha256 });
        await scope.audit.record({
          action: 'skill.activate',
          target: resources.skill(skillId),
          details: { pid, package_sha256: r.manifest.packageSha256, tools: r.toolNames },
        });
      }
      return getProcess(scope.store, pid);
    });
  }

  /** The Skill catalog: every loaded Skill's metadata. */
  skillCatalog(): SkillCatalogEntry[] {
    return [...this.#deps.registry.skills.values()]
      .map((s) => ({
        skillId: s.manifest.name,
        description: s.manifest.description,
        tools: [...s.manifest.allowedTools],
        plugin: s.plugin,
        packageSha256: s.manifest.packageSha256,
        path: s.manifest.path,
      }))
      .sort((a, b) => a.skillId.localeCompare(b.skillId));
  }

  /** The loaded plugins in load order: the kernel's own first, then the host's, then those named by specs. */
  loadedPlugins(): LoadedPluginInfo[] {
    return this.#deps.registry.plugins.map((p) => {
      const source = pluginSourceOf(p);
      const origin = p.name.startsWith('@libos/kernel:') ? 'kernel' : source ? 'spec' : 'host';
      const skills = [...this.#deps.registry.skills].filter(([, s]) => s.plugin === p.name).map(([id]) => id);
      const tools = [...this.#deps.registry.tools.values()].filter((t) => t.plugin === p.name).length;
      return {
        name: p.name,
        version: String(p.version ?? ''),
        origin,
        spec: source?.spec ?? null,
        file: source?.file ?? null,
        skills,
        tools,
      };
    });
  }

  /** True when some loaded plugin defines a tool of this name. */
  hasTool(name: string): boolean {
    return this.#deps.registry.tools.has(name);
  }

  /** The tools `pid` can see, with the JSON Schema a model is shown for each (generated from zod once per tool, frozen). */
  async toolSchemas(pid: string): Promise<ToolSchema[]> {
    const p = await this.process(pid);
    return p.visibleTools.map((name) => {
      const t = this.#deps.registry.tools.get(name)!.tool;
      return { name, description: t.description, inputSchema: toolJsonSchema(t) };
    });
  }

  async audit(q: AuditQuery = {}): Promise<AuditRecord[]> {
    return queryAudit(this.#live().db, q);
  }

  async events(q: EventQuery = {}): Promise<RuntimeEvent[]> {
    return queryEvents(this.#live().db, q);
  }

  /**
   * Listens to what the runtime commits: each durable event and each audit record, after its transaction commits.
   * Returns the function that stops listening. (Hosts use it to stream and to wake; they do not reach the bus.)
   *
   * @example
   * const stop = rt.watch({ event: (e) => console.log(e.seq, e.type) });
   * stop();
   */
  watch(listener: { readonly event?: (e: RuntimeEvent) => void; readonly audit?: (r: AuditRecord) => void }): () => void {
    const { event, audit } = listener;
    if (event) this.#deps.bus.on('event', event);
    if (audit) this.#deps.bus.on('audit', audit);
    return () => {
      if (event) this.#deps.bus.off('event', event);
      if (audit) this.#deps.bus.off('audit', audit);
    };
  }

  /** The sequence number of the newest durable event (0 for an empty store). */
  async lastEventSeq(): Promise<number> {
    // Among many hosts, the head is what this host's watchers have been told of, in order (later rows may be in flight).
    if (this.#shared) return this.#shared.feed.frontier;
    const row = await this.#live()
      .db.selectFrom('events')
      .select((eb) => eb.fn.max('seq').as('head'))
      .executeTakeFirst();
    return Number(row?.head ?? 0);
  }

  /**
   * Records what a host component did, in one host transaction: an event (`type`, `data`), an audit record, or both.
   *
   * @example
   * await rt.record({ event: { type: 'scheduler_paused', data: {} }, audit: { action: 'scheduler.pause', target: 'scheduler' } });
   */
  async record(entry: {
    readonly event?: { readonly type: string; readonly data?: Record<string, unknown> };
    readonly audit?: AuditEntry;
  }): Promise<void> {
    await this.transaction(async (scope) => {
      if (entry.event) await scope.events.emit(entry.event.type, entry.event.data ?? {});
      if (entry.audit) await scope.audit.record(entry.audit);
    });
  }

  /** The names of every registered tool, sorted. */
  toolNames(): string[] {
    return [...this.#deps.registry.tools.keys()].sort();
  }

  /**
   * A registered tool as its plugin defines it (name, description, zod `input`, policy), or null: for hosts that
   * validate or generate arguments before they call. Only `call` runs a tool; holding its definition grants nothing.
   *
   * @example
   * const input = rt.toolDefinition('get_current_time')?.input; // a zod schema
   * input?.safeParse({ timezone: 'UTC' }).success; // true
   */
  toolDefinition(name: string): AnyTool | null {
    return this.#deps.registry.tools.get(name)?.tool ?? null;
  }

  /**
   * A registered image as processes spawned from it get it (its tool groups resolved against the loaded Skills), or null.
   *
   * @example
   * rt.image('base-agent:v0')?.defaultTools; // ['discover_skills', 'activate_skill', ...]
   */
  image(id: string): ImageDefinition | null {
    return this.#deps.registry.images.get(id) ?? null;
  }

  /**
   * A host read through a plugin's service (`objects`, `tasks`, ...), in a read transaction as the host.
   *
   * @example
   * const objects = await rt.readService<{ listObjects(q: object): Promise<unknown[]> }>('objects', (s) => s.listObjects({ limit: 10 }));
   */
  async readService<S, T = unknown>(name: string, read: (service: S) => Promise<T>): Promise<T> {
    return this.transaction((scope) => read(scope.service<S>(name)));
  }

  /**
   * Runs the scheduler until nothing is runnable or `maxQuanta` is spent. A quantum is one model turn or one
   * resumed wait for one process. `profile` names an LLM profile of the host config (or is one): its
   * `parallel_tool_calls` decides whether a reply's batch runs or only its last valid call; without one, batches run.
   *
   * @example
   * import type { LlmScript } from '@libos/kernel';
   * declare const script: LlmScript;
   * await rt.run({ provider: new ScriptedProvider(script), maxQuanta: 100 });
   * await rt.run({ provider: providerFromProfile(rt.llmProfile('small')!), profile: 'small' });
   */
  async run(opts: Omit<RunOptions, 'profile'> & { readonly profile?: string | LlmProfile | null }): Promise<RunReport> {
    this.#live();
    const profile = typeof opts.profile === 'string' ? this.llmProfile(opts.profile) : (opts.profile ?? null);
    return this.#scheduler.runUntilIdle({ ...opts, profile });
  }

  /** Posts a message to a process from outside (a human: sender `human:<name>`). Wakes it if it waits for one like it. */
  async sendMessage(
    pid: string,
    payload: unknown,
    opts: { from?: string; channel?: string; kind?: string; delivery?: Delivery } = {},
  ): Promise<MessageInfo> {
    const from = opts.from ?? 'human:owner';
    if (!/^human:[a-z0-9][a-z0-9._-]*$/.test(from))
      throw new LibosError('invalid_arguments', `from: external senders are human:<name> (got ${JSON.stringify(from)})`);
    assertMessagePayload(payload);
    const posted = await this.transaction(
      (scope) =>
        postMessage(scope, {
          recipientPid: pid,
          sender: from,
          payload,
          labels: completeLabels(UNCLASSIFIED_EXTERNAL_LABELS),
          ...(opts.channel ? { channel: opts.channel } : {}),
          ...(opts.kind ? { kind: opts.kind } : {}),
          ...(opts.delivery ? { delivery: opts.delivery } : {}),
        }),
      from,
    );
    return messageFromWire(posted);
  }

  /**
   * Messages of a process, oldest first: all of them by default, unread only with `includeAcked: false` (first `limit`, default 100).
   * Reading here does not ACK.
   */
  async messages(pid: string, opts: { includeAcked?: boolean; limit?: number } = {}): Promise<MessageInfo[]> {
    const q = { includeAcked: opts.includeAcked ?? true, limit: opts.limit ?? 100 };
    return (await queryMessages(this.#live().db, pid, {}, q)).messages.map(messageFromWire);
  }

  /** The durable human request queue. */
  async humanRequests(q: { status?: HumanRequestStatus; pid?: string } = {}): Promise<HumanRequest[]> {
    return listHumanRequests(this.#live().db, q);
  }

  /** Answers a pending human request; wakes its process when its wait is settled. */
  async answerHuman(id: string, answer: HumanAnswer): Promise<HumanRequest> {
    return answerHuman(this.#live(), id, answer);
  }

  /** Cancels a pending human request; the waiting call resumes and fails (or reports cancelled). */
  async cancelHumanRequest(id: string, reason = 'cancelled by the host'): Promise<HumanRequest> {
    return cancelHuman(this.#live(), id, reason);
  }

  /** Recorded model calls. */
  async llmCalls(q: { pid?: string; limit?: number } = {}): Promise<LlmCallRecord[]> {
    return queryLlmCalls(this.#live().db, q);
  }

  /** Pauses, resumes, cancels or terminates any process as the host. */
  async signal(pid: string, signal: 'pause' | 'resume' | 'cancel' | 'terminate', reason?: string): Promise<ProcessInfo> {
    const deps = this.#live();
    return this.transaction(async (scope) => {
      const now = this.clock.now().toISOString();
      const p = await getProcess(scope.store, pid);
      const after =
        signal === 'pause'
          ? await transition(
              scope.store,
              pid,
              { from: ['runnable', 'created'], to: 'paused', wait: { kind: 'paused', ...(reason ? { reason } : {}) } },
              now,
            )
          : signal === 'resume'
            ? await transition(scope.store, pid, { from: ['paused'], to: 'runnable' }, now)
            : await endProcess(deps, scope, pid, {
                kind: 'killed',
                code: signal === 'cancel' ? 'cancelled' : 'terminated',
                ...(reason ? { reason } : {}),
              });
      await scope.audit.record({
        action: 'process.signal',
        target: resources.process(pid),
        decision: signal,
        details: { from: p.status, to: after.status },
      });
      return after;
    });
  }

  /**
   * Commits the units of work the store holds in its redo log to the store file now (group commit, K-9.7). Every
   * completed call is already durable without this (a crash replays the log at the next open); a host calls it
   * before it copies the store file, or to measure what the file holds.
   *
   * @example
   * await rt.call(pid, 'get_current_time', {});
   * rt.flush(); // the call's rows are in the SQLite file, not only in its redo log
   */
  flush(): void {
    this.#store.flush();
  }

  /**
   * Shuts down: each plugin's `close` hook runs in its own transaction (e.g. active ObjectTasks are cancelled with
   * `runtime shutdown`), then the store closes and the writer lease is released. Idempotent. A failed hook does not
   * keep the store open: its error is thrown once the store is closed. `shutdown: false` stops as a crash would: no
   * hook runs, and what was active is recovered by the next open (active ObjectTasks are then `abandoned`).
   */
  async close(opts: { readonly shutdown?: boolean } = {}): Promise<void> {
    if (this.#closed) return;
    const failures: unknown[] = [];
    // Among many hosts, the shutdown hooks (store-wide: e.g. every active ObjectTask cancelled) run only for the last.
    const last = opts.shutdown !== false && this.#shared ? (await this.#shared.others()) === 0 : true;
    for (const p of this.#deps.registry.plugins) {
      if (!p.hooks?.close || opts.shutdown === false || !last) continue;
      try {
        await inTransaction(this.#deps.db, this.#deps.scopes, 'host', null, (scope) => p.hooks!.close!(scope));
      } catch (err) {
        failures.push(err);
      }
    }
    this.#closed = true;
    this.#deps.bus.removeAllListeners();
    // A clean stop lets this host's trees go at once; `shutdown: false` leaves them to expire, as a crash would.
    if (this.#shared) await (opts.shutdown === false ? this.#shared.halt() : this.#shared.stop()).catch((err) => failures.push(err));
    await this.#store.close();
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1)
      throw new LibosError('internal_error', `${failures.length} plugin close hooks failed`, { cause: new AggregateError(failures) });
  }
}

/**
 * Opens a runtime on a store: takes the writer lease, runs the kernel's, the authority engine's and every
 * plugin's migrations in order, validates the plugins, then runs each plugin's open hook (e.g. the reopen sweep).
 *
 * @example
 * const rt = await openRuntime({ path: './.libos/libos.db', plugins: [capabilities(), objectMemory(), tasks(), session()] });
 */
export async function openRuntime(opts: OpenRuntimeOptions): Promise<Runtime> {
  // The host config is settled before anything is opened: a bad key fails here and the store stays untouched.
  const { config: hostConfig, path: hostConfigPath } = hostConfigFor(opts);
  const clock = opts.config?.clock ?? systemClock;
  const ids = opts.config?.ids ?? randomIds;
  let deps: KernelDeps | undefined;
  const getDeps = () => {
    if (!deps) throw new LibosError('internal_error', 'kernel used before it finished opening');
    return deps;
  };
  // Plugins the host config names load after the host's own, resolved from the config file's folder.
  const baseDir = opts.pluginBaseDir ?? (hostConfigPath ? dirname(hostConfigPath) : process.cwd());
  const named = hostConfig.plugins.length ? await importPluginSpecs(hostConfig.plugins, baseDir) : [];
  const configured = [...(opts.plugins ?? []), ...named].map((p) => {
    if (!p.configure) return p;
    const shaped = p.configure(hostConfig);
    setPluginSource(shaped, pluginSourceOf(p));
    return shaped;
  });
  const registry = loadPlugins(
    [skillNavigationPlugin(() => getDeps().registry), childProcessesPlugin(getDeps), agentImagesPlugin(getDeps), ...configured],
    BUILTIN_IMAGES,
  );
  const engine = createAuthorityEngine({ clock, ids, owners: [...registry.owners.values()] });
  // The kernel runs the authority engine itself: its migrations and its `capabilities` service come from this
  // engine (one clock, one id source), so the @libos/capabilities plugin's copies of them are not used twice.
  const builtinServices: Record<string, ServiceFactory> = {
    ...kernelServices(getDeps),
    [CAPABILITY_SERVICE_NAME]: (scope) => engine.service(scope),
  };
  const kyselyPlugins = opts.kyselyPlugins ? { plugins: opts.kyselyPlugins } : {};
  const host = opts.host === undefined ? undefined : resolveHostOptions(opts.host);
  if (host && !isPostgresUrl(opts.path))
    throw new LibosError('invalid_arguments', `host: many hosts share a postgres:// store only; ${opts.path} has one writer`, {
      details: { field: 'host' },
    });
  const store: OpenedStore = isPostgresUrl(opts.path)
    ? await openPostgresStore(opts.path, { ...kyselyPlugins, shared: host !== undefined, hostId: host?.id })
    : openSqliteStore(opts.path, { ...(opts.maxStorePages !== undefined ? { maxPageCount: opts.maxStorePages } : {}), ...kyselyPlugins });
  // One host of many on a shared store: the store's shared session and this host's options (else undefined).
  const manyHosts = store.shared && host ? { session: store.shared, host } : undefined;
  const bus = new EventBus();
  // Many hosts: this host's commits do not publish their events directly; the event feed publishes every host's, in
  // `seq` order (`store/postgres/event-feed.ts`), and a commit here only makes it read at once. Audit stays local.
  let shared: SharedHost | undefined; // set once this host has joined (below)
  const scopeBus = host ? new EventBus() : bus;
  if (host) {
    // With no watcher the feed's own timer keeps it current; a read after every commit would only cost a statement.
    scopeBus.on('event', () => {
      if (bus.listenerCount('event') > 0) shared?.readEvents();
    });
    scopeBus.on('audit', (r) => bus.emit('audit', r));
  }
  const reg = registry;
  for (const name of Object.keys(builtinServices)) {
    if (reg.services.has(name) && !(name === CAPABILITY_SERVICE_NAME && reg.plugins.some((p) => p.name === CAPABILITIES_PLUGIN)))
      throw new LibosError(
        'plugin_invalid',
        `plugins failed to load:\nservice ${JSON.stringify(name)} is provided by the kernel; a plugin cannot replace it`,
      );
  }
  const eventHooks = new Map<string, ((scope: ServiceScope, event: EmittedEvent) => Promise<void>)[]>();
  for (const p of reg.plugins)
    for (const [type, hook] of Object.entries(p.hooks?.events ?? {})) eventHooks.set(type, [...(eventHooks.get(type) ?? []), hook]);
  // Runtime-local payloads belong to this open of this runtime: an instance id new at every open (and, among many
  // hosts, one another host can ask the roster about while this one lives).
  const instanceId = `${host?.id ?? 'rt'}.${Math.random().toString(36).slice(2, 10)}`;
  const runtimeInstance = manyHosts
    ? SharedHost.instance(manyHosts.session, manyHosts.host, instanceId)
    : { instanceId, holder: async () => null };
  // Own keys only: a name such as `toString` is no service.
  const serviceFactory = (name: string): ServiceFactory | undefined =>
    Object.hasOwn(builtinServices, name) ? builtinServices[name] : reg.services.get(name);
  const scopes: ScopeFactory = {
    clock,
    bus: scopeBus,
    runtime: runtimeInstance,
    ...(store.appendLog ? { appendLog: store.appendLog } : {}),
    ...(store.exec ? { exec: store.exec } : {}),
    eventHooks,
    authority: (scope, pid) => engine.authority(scope, pid),
    service(name, scope) {
      const factory = serviceFactory(name);
      if (!factory) throw new LibosError('not_found', `service ${JSON.stringify(name)} is not provided by any loaded plugin`);
      return factory(scope);
    },
    hasService: (name) => serviceFactory(name) !== undefined,
  };
  const base: KernelDeps = {
    db: store.db,
    registry: reg,
    engine,
    scopes,
    clock,
    ids,
    bus,
    hostConfig,
    seenTexts: new SeenTexts(),
    committedTexts: new CommittedTexts(),
    defersGuards: store.defersGuards === true,
  };
  deps = base;
  try {
    const sets = storeMigrationSets(engine.migrations, reg.migrations);
    await migrate(store.db, sets, () => clock.now().toISOString(), store.location, migrationKit(store.dialect));
    // A live process that needs a plugin this runtime lacks fails the open here, naming it, before anything is swept.
    await assertStorePlugins(store.db, reg, store.location);
    await recordStorePlugins(store.db, reg, clock.now().toISOString());
    // Among many hosts, the store-wide reopen sweeps run only when no other host is live: a live host's work is not
    // cut off. A dead host's trees are recovered one by one as they are taken over (`SharedHost.claim`).
    const alone = manyHosts ? (await SharedHost.join(manyHosts.session, manyHosts.host, instanceId)) === 0 : true;
    for (const p of reg.plugins) {
      if (alone && p.hooks?.open) await inTransaction(store.db, scopes, 'host', null, (scope) => p.hooks!.open!(scope));
    }
    if (alone) await recoverOnOpen(deps);
    if (manyHosts) {
      const feed = new EventFeed(store.db, (e) => bus.emit('event', e));
      await feed.start();
      shared = new SharedHost(getDeps, manyHosts.session, manyHosts.host, feed);
      deps = { ...base, trees: shared };
      await manyHosts.session.endOpen();
    }
    store.startGroupCommit();
  } catch (err) {
    // The open's error is the one thrown; a failed stop (this host left in the roster until its lease expires) or a
    // failed close is reported as a warning, not dropped, and does not hide why the open failed.
    await shared?.stop().catch((stopErr: unknown) =>
      process.emitWarning(`host ${host?.id}: the open failed, and so did leaving the host roster: ${(stopErr as Error).message}`, {
        type: 'LibosWarning',
        code: 'host_stop_failed',
      }),
    );
    await store.close().catch((closeErr: unknown) =>
      process.emitWarning(`store ${store.location}: the open failed, and so did closing the store: ${(closeErr as Error).message}`, {
        type: 'LibosWarning',
        code: 'store_close_failed',
      }),
    );
    throw err;
  }
  return new Runtime(deps, store, hostConfigPath, shared);
}

/** The host config `openRuntime` uses: the one given, else the file in the store's folder, else all defaults. */
function hostConfigFor(opts: OpenRuntimeOptions): { config: HostConfig; path: string | null } {
  return opts.hostConfig !== undefined ? { config: parseHostConfig(opts.hostConfig), path: null } : hostConfigForStore(opts.path);
}
