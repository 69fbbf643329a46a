/**
 * The LLM provider contract: the executor hands a provider the prompt and the projected tool schemas, and
 * gets back tool calls. Providers are stateless between calls (every turn is system + one user message).
 *
 * Providers throw only `LibosError`: `provider_error`, `provider_timeout`, `cancelled` (the request's
 * signal was aborted) or `invalid_arguments` (bad configuration).
 */

/**
 * One chat message.
 *
 * @example
 * const system: LlmMessage = { role: 'system', content: 'You are a libOS process.' };
 */
export interface LlmMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_call_id?: string;
}

/**
 * A tool the model may call; `parameters` is a JSON Schema object.
 *
 * @example
 * const exit: LlmToolSchema = {
 *   name: 'process_exit',
 *   description: 'Ends the process.',
 *   parameters: { type: 'object', properties: { message: { type: 'string' } } },
 * };
 */
export interface LlmToolSchema {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * One tool call chosen by the model. When the model's arguments did not parse as a JSON object the call is
 * still returned, with `arguments: {}`, `argumentsError` and `rawArguments`, so the executor can hand the
 * error back to the model as a tool error instead of failing the turn.
 *
 * @example
 * const call: LlmToolCall = { id: 'call_1', name: 'process_exit', arguments: { message: 'done' } };
 * if (call.argumentsError !== undefined) console.warn(call.argumentsError, call.rawArguments);
 */
export interface LlmToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** set when the model's arguments string did not parse as a JSON object */
  argumentsError?: string;
  /** the model's arguments exactly as received; set together with `argumentsError` */
  rawArguments?: string;
}

/**
 * Token usage as the endpoint reported it; `null` where the endpoint did not say (the executor decides
 * what a missing count means for budgets).
 *
 * @example
 * const usage: LlmUsage = { prompt_tokens: 812, completion_tokens: 40, total_tokens: 852 };
 */
export interface LlmUsage {
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
}

/**
 * One action-selection request.
 *
 * @example
 * const req: LlmRequest = {
 *   messages: [{ role: 'system', content: 'You are a libOS process.' }, { role: 'user', content: 'Goal: say hi' }],
 *   tools: [{ name: 'process_exit', description: 'Ends the process.', parameters: { type: 'object' } }],
 *   parallelToolCalls: false,
 *   pid: 'pid_0123456789abcdef',
 * };
 */
export interface LlmRequest {
  messages: LlmMessage[];
  tools: LlmToolSchema[];
  parallelToolCalls: boolean;
  /** aborting it rejects the call with a `cancelled` LibosError */
  signal?: AbortSignal;
  /** the calling process; the scripted provider keys its per-process scripts on it */
  pid?: string;
  /** the calling process's image; the scripted provider can play every process of an image (e.g. a compressor) */
  imageId?: string;
  /**
   * Told before each retry a provider makes after a failed attempt (its retries are bounded), so a host can show
   * the progress; a throw here fails the request with that error.
   */
  onRetry?: (retry: LlmRetry) => void | Promise<void>;
}

/**
 * One retry a provider is about to make: the attempt that failed (1-based), how many it makes at most, the
 * backoff before the next one, and the failure.
 *
 * @example
 * const retry: LlmRetry = { attempt: 1, max_attempts: 4, delay_ms: 480, error: { code: 'provider_error', message: 'HTTP 503' } };
 */
export interface LlmRetry {
  readonly attempt: number;
  readonly max_attempts: number;
  readonly delay_ms: number;
  readonly error: { readonly code: string; readonly message: string };
}

/**
 * A provider's answer. `api` names the wire API used (`chat`, `scripted`); `raw` is the decoded response
 * body, for the `llm_calls` record.
 *
 * @example
 * declare const req: LlmRequest;
 * const res: LlmResponse = await provider.completeAction(req);
 * for (const call of res.toolCalls) console.log(call.name, call.arguments);
 */
export interface LlmResponse {
  content: string | null;
  toolCalls: LlmToolCall[];
  api: string;
  model: string;
  usage: LlmUsage;
  raw?: unknown;
}

/**
 * Turns a prompt plus tool schemas into tool calls.
 *
 * @example
 * const provider: LlmProvider = new ScriptedProvider([[{ tool: 'process_exit', args: { message: 'hi' } }]]);
 * const res = await provider.completeAction({ messages: [], tools: [], parallelToolCalls: false });
 * res.toolCalls[0].name; // 'process_exit'
 */
export interface LlmProvider {
  readonly name: string;
  readonly model: string;
  completeAction(req: LlmRequest): Promise<LlmResponse>;
}
