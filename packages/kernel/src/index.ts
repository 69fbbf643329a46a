export { openRuntime, Runtime } from './runtime.js';
export { DEFAULT_CLAIM_BATCH, DEFAULT_LEASE_MS, type HostOptions } from './hosts/shared-host.js';
// Host config: one file next to the store (or --config), validated before the store is opened.
export {
  HOST_CONFIG_FILE_NAMES,
  LLM_CONTEXT_POLICIES,
  LLM_PROFILE_PROVIDERS,
  hostConfigForStore,
  hostConfigSchema,
  isIanaTimezone,
  llmProfileSchema,
  loadHostConfig,
  parseHostConfig,
  resolveLlmProfile,
  type HostConfig,
  type HostConfigInput,
  type HostConfigProblem,
  type LlmContextPolicy,
  type LlmProfile,
  type LlmProfileConfig,
  type LoadedHostConfig,
} from './config/host-config.js';
export { MCP_SERVER_NAME_PATTERN, mcpServerSchema, type McpServerConfig } from './config/mcp-servers.js';
export type {
  LoadedPluginInfo,
  OpenRuntimeOptions,
  RuntimeConfig,
  SkillCatalogEntry,
  ToolSchema,
  GrantOptions,
  BudgetReport,
  MessageInfo,
} from './runtime.js';
// The casing boundary: TypeScript camelCase <-> wire snake_case, one explicit mapper per record type.
export * as wire from './wire/wire.js';
export type { ToolCallResult } from './broker/tool-result.js';
export { MCP_CLIENT_SINK } from './sinks/clear-sink.js';
export type { ProcessInfo, ProcessStatus, LoadedSkill } from './processes/process-record.js';
export type { SpawnOptions } from './processes/spawn.js';
export type { AuditRecord, RuntimeEvent } from './events/event-bus.js';
export type { AuditQuery, EventQuery } from './events/queries.js';
export { BASE_AGENT, BUILTIN_IMAGES } from './images/builtin-images.js';
export { loadPlugins } from './plugins/load-plugins.js';
// Third-party plugins: by spec (package name or path), checked without a store, and recorded in each store.
export { checkPlugins } from './plugins/check-plugins.js';
export { importPluginSpec, importPluginSpecs, pluginSourceOf, resolvePluginSpec, type PluginSource } from './plugins/plugin-specs.js';
export { recordedPlugins, type ProcessNeeds, type RecordedPlugin } from './plugins/store-plugins.js';
// The kernel's tables as kysely types: what `Runtime.transaction`'s `scope.store` and `recordedPlugins` take.
export type { KernelDatabase, KernelStore } from './store/kernel-database.js';
// Migrations on either dialect (issue 15): the sets a runtime runs, the runner, and each dialect's kit.
export { migrate, type MigrationSet } from './store/migrate.js';
export { migrationKit, type DialectMigrationKit } from './store/migration-kit.js';
export { migrationSetsFor } from './store/migration-sets.js';
export type { RunOptions, RunReport } from './scheduler/run-until-idle.js';
export type { QuantumResult, StopReason } from './executor/run-quantum.js';
export type { HumanAnswer } from './human/answer-human.js';
export type { LlmCallRecord } from './executor/llm-calls.js';
export type { ProcessMessage, Delivery } from './mailbox/messages.js';
export type { ToolNotice } from './broker/tool-result.js';
// LLM providers: the contract, the deterministic ScriptedProvider and the OpenAI-compatible OpenAiProvider.
export type { LlmMessage, LlmProvider, LlmRequest, LlmResponse, LlmRetry, LlmToolCall, LlmToolSchema, LlmUsage } from './llm/provider.js';
export {
  DEFAULT_SCRIPT_KEY,
  loadLlmScriptFile,
  parseLlmScript,
  type LlmScript,
  type ScriptedToolCall,
  type ScriptedTurn,
} from './llm/llm-script.js';
export { ScriptedProvider, type ScriptedProviderOptions, type ScriptedRequestRecord } from './llm/scripted-provider.js';
export { providerFromProfile, type ProfileProviderOptions } from './llm/provider-from-profile.js';
export {
  OPENAI_DEFAULT_BASE_URL,
  OpenAiProvider,
  openAiProviderFromEnv,
  type FetchLike,
  type OpenAiProviderOptions,
  type SleepFn,
} from './llm/openai-provider.js';
// LLM context Objects (llm_context:<pid>) and their maintenance: the render, the conservative input estimate, the triggers.
export { CONTEXT_HEADING, estimateContextTokens, renderContext } from './context/render-context.js';
export { BYTES_PER_TOKEN_BOUND, countTokens, estimateInput, tokenizerFor, type InputEstimate } from './context/input-estimate.js';
export {
  DEFAULT_THRESHOLD_RATIO,
  maintenanceSettings,
  STORAGE_TRIGGER_BYTES,
  type MaintenanceSettings,
} from './context/context-maintenance.js';
