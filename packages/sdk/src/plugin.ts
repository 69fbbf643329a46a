import type { ServiceScope } from './context.js';
import { defineErrorCodes, type ErrorCategory } from './errors.js';
import type { MigrationKit } from './migration-kit.js';
import type { Right } from './rights.js';
import type { SkillSource } from './skill.js';
import type { SubtreeStateContributor } from './subtree-state.js';
import type { AnyTool } from './tool.js';

/**
 * One schema migration a plugin owns; run in order at open. `db` is a `Kysely<any>` (a transaction); `kit` gives the
 * dialect's column types and statements (see `MigrationKit`). A migration written as `up(db)` still runs.
 */
export interface Migration {
  readonly name: string;
  up(db: unknown, kit: MigrationKit): Promise<void>;
}

/** How the kernel builds the prompt for an image. */
export type PromptMode = 'image_only' | 'minimal_runtime' | 'libos_default';

/**
 * What activating a Skill does to a process's callable table: `extend_on_activation` adds the Skill's tools (the
 * `skill:<id>` execute grant is the gate; capabilities still decide each call); `exact` keeps the table the image's
 * `defaultTools`, exactly (a compressor or reviewer image whose tools must not grow).
 */
export const TOOL_TABLE_POLICIES = ['extend_on_activation', 'exact'] as const;
export type ToolTablePolicy = (typeof TOOL_TABLE_POLICIES)[number];

/** A registered image: what a process boots into. */
export interface ImageDefinition {
  /** `name:version`, e.g. `base-agent:v0`. */
  readonly id: string;
  readonly description: string;
  readonly systemPrompt: string;
  readonly promptMode: PromptMode;
  /** Skills activated at spawn/exec. */
  readonly defaultSkills: readonly string[];
  /**
   * The process's callable tool table at spawn and exec. Unless the table is `exact`, loading a Skill (one of
   * `defaultSkills`, or an activated one) adds that Skill's tools to it.
   */
  readonly defaultTools: readonly string[];
  /** Default: `exact` for an `image_only` image, else `extend_on_activation` (see `TOOL_TABLE_POLICIES`). */
  readonly toolTablePolicy?: ToolTablePolicy;
  /** Declared only; never granted. */
  readonly requiredCapabilities?: readonly { readonly resource: string; readonly rights: readonly string[] }[];
  readonly metadata?: Readonly<Record<string, string>>;
  /** How the runtime keeps this image's LLM context under the model's window (default: `auto_compact` at 0.8). */
  readonly contextManagement?: ContextManagement;
}

/**
 * An image's tool-table policy, its default filled in: `exact` for an `image_only` image unless it says otherwise.
 *
 * @example
 * declare const image: ImageDefinition;
 * toolTablePolicyOf({ ...image, promptMode: 'image_only' }); // 'exact'
 */
export function toolTablePolicyOf(image: Pick<ImageDefinition, 'promptMode' | 'toolTablePolicy'>): ToolTablePolicy {
  return image.toolTablePolicy ?? (image.promptMode === 'image_only' ? 'exact' : 'extend_on_activation');
}

/** The context-maintenance modes: compact automatically, tell the model, or do nothing. */
export const CONTEXT_MANAGEMENT_MODES = ['auto_compact', 'prompt', 'disabled'] as const;
export type ContextManagementMode = (typeof CONTEXT_MANAGEMENT_MODES)[number];

/**
 * An image's context maintenance. Before a model call the kernel projects the prompt's size (a conservative input
 * estimate plus the reply's `max_tokens` reserve) against the model's context window; at `thresholdRatio` or above:
 * `auto_compact` dispatches `tool` through the ToolBroker (only with `context:maintenance` execute, once per
 * pressure episode), `prompt` appends a pressure notice to the prompt (not for `image_only` images), `disabled`
 * does nothing.
 *
 * @example
 * const cm: ContextManagement = {
 *   mode: 'auto_compact',
 *   thresholdRatio: 0.8,
 *   tool: { name: 'compact_process_context', arguments: { max_chunks: 2 } },
 * };
 */
export interface ContextManagement {
  /** Default `auto_compact`. */
  readonly mode?: ContextManagementMode;
  /** In (0, 1]; default 0.8. */
  readonly thresholdRatio?: number;
  /** The tool `auto_compact` dispatches; default `compact_process_context` with no arguments. */
  readonly tool?: { readonly name: string; readonly arguments?: Readonly<Record<string, unknown>> };
  /** The pressure notice's first line in `prompt` mode. */
  readonly prompt?: string;
}

/** A service factory: called with a scope bound to one transaction. */
export type ServiceFactory<T = unknown> = (scope: ServiceScope) => T;

/** A durable event as a hook sees it, inside the transaction that emitted it. */
export interface EmittedEvent {
  readonly id: string;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface PluginHooks {
  /** Runs once at open, after migrations, before any work is admitted (e.g. the reopen sweep). */
  open?(scope: ServiceScope): Promise<void>;
  /**
   * One host of many on a shared store took over the process tree `tree.rootPid` (its `pids`) from a host that stopped
   * renewing its lease, in the takeover's transaction: recover what that host held for these processes only, as `open`
   * does for the whole store at a reopen (e.g. ObjectTasks abandoning the tree's active tasks).
   */
  recoverTree?(scope: ServiceScope, tree: { readonly rootPid: string; readonly pids: readonly string[] }): Promise<void>;
  /**
   * Reacts to events of the named types inside the transaction that emits them (e.g. ObjectTasks telling a runner
   * that its owner Object changed). A throw rolls that transaction back, so handlers should catch what they can.
   */
  events?: Readonly<Record<string, (scope: ServiceScope, event: EmittedEvent) => Promise<void>>>;
  /**
   * Runs once when the runtime shuts down, before the store closes, in its own transaction (e.g. ObjectTasks cancelling
   * active tasks with `runtime shutdown`). A throw is reported by `close()` after every hook ran; the store still closes.
   */
  close?(scope: ServiceScope): Promise<void>;
}

/** What an owner holds on one resource because it owns it (see `OwnershipResolver`). */
export interface OwnedResource {
  /** The resource body after `kind:` (e.g. an oid). */
  readonly body: string;
  /** The owner: the subject that holds the rights (a pid, or another owner id such as a task id). */
  readonly owner: string;
  readonly rights: readonly Right[];
  /** When ownership began (ISO-8601): the implicit grant's `issuedAt`. */
  readonly since: string;
  /** Attribution shown on the implicit grant; never authorizes. */
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * Declares that resources of one kind have owners and how to find them. The authority engine then treats "S owns
 * `kind:body`" as an allow of the owner's `rights` on exactly `kind:body`, held and issued by S, unlimited,
 * non-delegable and revocable, with the id `cap_own:kind:body`, instead of one stored grant per resource. A stored
 * row with that id (written when the implicit grant is revoked) replaces it. Both functions run in the caller's
 * store transaction (`store` is `ServiceScope.store`).
 */
export interface OwnershipResolver {
  /** A resource kind, e.g. `object`. */
  readonly kind: string;
  /** The owner of `kind:<body>`, or null when it has none (or does not exist). */
  ownerOf(store: unknown, body: string): Promise<OwnedResource | null>;
  /**
   * The tables `ownerOf` reads. When given, the authority engine caches its answers in the store memo (`StoreMemo`)
   * until one of them is written; without it, every check asks again.
   */
  readonly tables?: readonly string[];
  /**
   * True when `ownerOf` reads only rows named by `body`'s key (`where oid = ?`), so rows inserted later never change
   * an owner it found: a found owner then stays cached until a row of `tables` is updated or deleted (`foundRows`),
   * not whenever one is inserted. A lookup that finds nothing is never cached this way.
   */
  readonly keyed?: boolean;
  /** Everything of this kind `owner` owns, oldest first (listing a subject's grants, fork duplication). */
  ownedBy(store: unknown, owner: string): Promise<readonly OwnedResource[]>;
}

/**
 * What a plugin may read of the host config (the kernel validates the whole file before a store is opened). Keys
 * the kernel alone uses (LLM profiles, the context policy) are not here.
 */
export interface HostSettings {
  /** Default IANA timezone, e.g. `UTC` (what `get_current_time` uses when none is given). */
  readonly timezone: string;
  /** The largest delay one `sleep` call may ask for, in seconds. */
  readonly sleep: { readonly max_seconds: number };
}

/**
 * A Skill plugin: SKILL.md files, the tools they name, migrations, services and images.
 */
export interface Plugin {
  readonly name: string;
  readonly version: string;
  readonly skills: readonly SkillSource[];
  readonly tools: readonly AnyTool[];
  readonly migrations?: readonly Migration[];
  readonly services?: Readonly<Record<string, ServiceFactory>>;
  readonly images?: readonly ImageDefinition[];
  readonly hooks?: PluginHooks;
  /** Resource kinds whose owners hold rights by ownership (at most one resolver per kind across plugins). */
  readonly owners?: readonly OwnershipResolver[];
  /** This plugin's share of subtree capture, restore and fork (checkpoints), for the tables it owns. */
  readonly subtreeState?: SubtreeStateContributor;
  /**
   * The plugin's own error codes, each under one of the closed categories (`{ weather_down: 'unavailable' }`), so
   * its tools can throw `new LibosError('weather_down', ...)`. A kernel code cannot be redeclared, and two loaded
   * plugins cannot declare one code. A code nobody declared still becomes `internal_error`.
   */
  readonly errorCodes?: Readonly<Record<string, ErrorCategory>>;
  /**
   * Returns the plugin as the host config shapes it (e.g. tool schemas whose defaults and bounds come from it).
   * `openRuntime` calls it once, before loading, with the validated config; options the plugin was built with
   * should win over the host's settings.
   */
  readonly configure?: (host: HostSettings) => Plugin;
}

/**
 * Defines a plugin.
 *
 * @example
 * import { skillFromText, type AnyTool } from '@libos/sdk';
 * declare const ECHO_SKILL_MD: string, echo: AnyTool; // the Skill's text and the tool, beside the plugin
 * export const echoPlugin = () => definePlugin({
 *   name: 'echo', version: '0.1.0',
 *   skills: [skillFromText(ECHO_SKILL_MD, 'echo')],
 *   tools: [echo],
 * });
 */
export function definePlugin(plugin: Plugin): Plugin {
  if (typeof plugin.name !== 'string' || plugin.name.trim() === '') throw new TypeError('definePlugin: name is required');
  if (plugin.errorCodes) defineErrorCodes(plugin.name, plugin.errorCodes);
  return Object.freeze({ ...plugin });
}
