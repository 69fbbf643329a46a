import { LibosError } from '@libos/sdk';
import type { LlmRequest, LlmResponse, LlmToolCall, LlmUsage } from '../provider.js';

/** The request options of a chat-completions call besides messages and tools. */
export interface ChatRequestOptions {
  readonly model: string;
  readonly temperature: number;
  readonly maxTokens: number | undefined;
}

/**
 * The chat-completions request body. `tools`, `tool_choice` and `parallel_tool_calls` are sent only when there
 * are tools (endpoints reject `tool_choice` without tools).
 */
export function buildChatRequestBody(req: LlmRequest, opts: ChatRequestOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: opts.model,
    messages: req.messages.map((m) =>
      m.tool_call_id === undefined
        ? { role: m.role, content: m.content }
        : { role: m.role, content: m.content, tool_call_id: m.tool_call_id },
    ),
    temperature: opts.temperature,
  };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
    body.tool_choice = 'auto';
    body.parallel_tool_calls = req.parallelToolCalls;
  }
  if (opts.maxTokens !== undefined) body.max_tokens = opts.maxTokens;
  return body;
}

/**
 * Decodes a chat-completions response body (already JSON-parsed). A body without `choices[0].message`, or a
 * tool call without a function name, is a `provider_error`; arguments that are not a JSON object are not.
 */
export function parseChatResponse(body: unknown, fallbackModel: string): LlmResponse {
  if (!isRecord(body) || !Array.isArray(body.choices) || body.choices.length === 0) {
    throw malformed('no choices');
  }
  const choice: unknown = body.choices[0];
  if (!isRecord(choice) || !isRecord(choice.message)) throw malformed('choices[0].message is missing');
  const message = choice.message;
  const rawCalls = message.tool_calls;
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls))
    throw malformed('choices[0].message.tool_calls is not an array');
  const toolCalls = (rawCalls ?? []).map((call: unknown, i: number) => parseToolCall(call, i));
  return {
    content: typeof message.content === 'string' ? message.content : null,
    toolCalls,
    api: 'chat',
    model: typeof body.model === 'string' && body.model !== '' ? body.model : fallbackModel,
    usage: parseUsage(body.usage),
    raw: body,
  };
}

function parseToolCall(call: unknown, index: number): LlmToolCall {
  const where = `choices[0].message.tool_calls[${index}]`;
  if (!isRecord(call) || !isRecord(call.function)) throw malformed(`${where}.function is missing`);
  const name = call.function.name;
  if (typeof name !== 'string' || name === '') throw malformed(`${where}.function.name is missing`);
  const id = typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}`;
  return { id, name, ...parseToolArguments(call.function.arguments) };
}

/**
 * The model's arguments: a JSON string (the wire format) or, from lenient servers, an object already. An empty
 * or missing string means no arguments. Anything else that is not a JSON object comes back as `arguments: {}`
 * with `argumentsError` and `rawArguments`.
 */
export function parseToolArguments(raw: unknown): Pick<LlmToolCall, 'arguments' | 'argumentsError' | 'rawArguments'> {
  if (raw === undefined || raw === null) return { arguments: {} };
  if (isRecord(raw)) return { arguments: raw };
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  if (typeof raw === 'string' && raw.trim() === '') return { arguments: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { arguments: {}, argumentsError: `arguments are not a JSON object: ${reason}`, rawArguments: text };
  }
  if (isRecord(parsed)) return { arguments: parsed };
  const kind = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`;
  return { arguments: {}, argumentsError: `arguments are not a JSON object: got ${kind}`, rawArguments: text };
}

/** `usage` with OpenAI (`prompt_tokens`) or Responses-style (`input_tokens`) names; anything not a count is `null`. */
export function parseUsage(usage: unknown): LlmUsage {
  if (!isRecord(usage)) return { prompt_tokens: null, completion_tokens: null, total_tokens: null };
  return {
    prompt_tokens: count(usage.prompt_tokens) ?? count(usage.input_tokens),
    completion_tokens: count(usage.completion_tokens) ?? count(usage.output_tokens),
    total_tokens: count(usage.total_tokens),
  };
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

function malformed(what: string): LibosError {
  return new LibosError('provider_error', `openai provider: malformed response: ${what}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
