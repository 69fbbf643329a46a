import { SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { LibosError } from '@libos/sdk';
import type { ToolCallResult } from '../broker/tool-result.js';
import type { CallOptions } from '../call/call-state.js';
import type { LlmProvider, LlmResponse } from '../llm/provider.js';

/**
 * OpenTelemetry spans for model calls and tool calls, named and attributed per the OpenTelemetry GenAI semantic
 * conventions (`chat <model>` with `gen_ai.operation.name: chat`; `execute_tool <tool>` with `execute_tool`).
 * Only `@opentelemetry/api` is used: without a registered SDK every span is a no-op. libOS's own facts use
 * `libos.*` attributes. Never recorded: prompts, replies, tool arguments or payloads (only ids, names, counts).
 *
 * @example
 * // In the host, before opening a runtime:
 * import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
 * const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
 * trace.setGlobalTracerProvider(provider);
 */
// Looked up per span (cheap), so an SDK registered, replaced or disabled after this module loads takes effect.
const tracer = () => trace.getTracer('@libos/kernel');

/** Attribute names of the GenAI semantic conventions used here. */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolType: 'gen_ai.tool.type',
  toolCallId: 'gen_ai.tool.call.id',
  errorType: 'error.type',
} as const;

function fail(span: Span, code: string, message: string): void {
  span.setAttribute(GEN_AI.errorType, code);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Ends `span` after `run`, recording a thrown error (rethrown) as the span's error. */
async function within<T>(span: Span, run: () => Promise<T>, settle: (value: T) => void): Promise<T> {
  try {
    const value = await run();
    if (span.isRecording()) settle(value);
    return value;
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    fail(span, typeof e.code === 'string' ? e.code : 'internal_error', String(e.message ?? err));
    throw err;
  } finally {
    span.end();
  }
}

/**
 * One model call as a `chat <model>` client span: provider and model requested, then the model answered and the
 * token usage, or `error.type` (the LibosError code) when the call failed.
 */
export function traceModelCall<A extends { readonly response: LlmResponse | null; readonly error: LibosError | null }>(
  provider: LlmProvider,
  caller: { readonly pid: string; readonly imageId: string },
  call: () => Promise<A>,
): Promise<A> {
  const attributes: Attributes = {
    [GEN_AI.operation]: 'chat',
    [GEN_AI.provider]: provider.name,
    [GEN_AI.requestModel]: provider.model,
    'libos.pid': caller.pid,
    'libos.image_id': caller.imageId,
  };
  return tracer().startActiveSpan(`chat ${provider.model}`, { kind: SpanKind.CLIENT, attributes }, (span) =>
    within(span, call, ({ response, error }) => {
      if (error) return fail(span, error.code, error.message);
      if (!response) return;
      span.setAttribute(GEN_AI.responseModel, response.model);
      if (response.usage.prompt_tokens !== null) span.setAttribute(GEN_AI.inputTokens, response.usage.prompt_tokens);
      if (response.usage.completion_tokens !== null) span.setAttribute(GEN_AI.outputTokens, response.usage.completion_tokens);
      span.setAttribute('libos.tool_calls', response.toolCalls.length);
    }),
  );
}

/**
 * One broker call as an `execute_tool <tool>` span: the tool, the caller, whether it re-ran a saved call; then the
 * call id and either a wait, or `error.type` (the error code of a failed envelope).
 */
export function traceToolCall(pid: string, tool: string, opts: CallOptions, call: () => Promise<ToolCallResult>): Promise<ToolCallResult> {
  const attributes: Attributes = {
    [GEN_AI.operation]: 'execute_tool',
    [GEN_AI.toolName]: tool,
    [GEN_AI.toolType]: 'function',
    'libos.pid': pid,
    'libos.call.origin': opts.origin?.kind ?? 'host',
    'libos.call.resumed': opts.resume !== undefined,
  };
  return tracer().startActiveSpan(`execute_tool ${tool}`, { kind: SpanKind.INTERNAL, attributes }, (span) =>
    within(span, call, (r) => {
      span.setAttribute(GEN_AI.toolCallId, r.call_id);
      if (!r.ok) return fail(span, r.error.code, r.error.message);
      if (r.wait) span.setAttribute('libos.call.wait', r.wait.kind);
    }),
  );
}
