/**
 * LLM providers: the provider contract, the deterministic `ScriptedProvider` and the OpenAI-compatible
 * chat-completions `OpenAiProvider`.
 *
 * @example
 * import { ScriptedProvider, openAiProviderFromEnv, type LlmProvider } from './llm/index.js';
 * const provider: LlmProvider = process.env.LIBOS_OPENAI_MODEL ? openAiProviderFromEnv() : new ScriptedProvider([]);
 */
export type { LlmMessage, LlmProvider, LlmRequest, LlmResponse, LlmToolCall, LlmToolSchema, LlmUsage } from './provider.js';
export { DEFAULT_SCRIPT_KEY, loadLlmScriptFile, parseLlmScript, type LlmScript, type ScriptedToolCall, type ScriptedTurn } from './llm-script.js';
export { ScriptedProvider, type ScriptedProviderOptions, type ScriptedRequestRecord } from './scripted-provider.js';
export {
  OPENAI_DEFAULT_BASE_URL,
  OpenAiProvider,
  openAiProviderFromEnv,
  type FetchLike,
  type OpenAiProviderOptions,
  type SleepFn,
} from './openai-provider.js';
