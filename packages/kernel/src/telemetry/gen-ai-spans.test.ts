import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { LibosError } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import type { LlmProvider } from '../llm/provider.js';
import { ScriptedProvider } from '../llm/scripted-provider.js';
import { openRuntime, type Runtime } from '../runtime.js';

const exporter = new InMemorySpanExporter();
let rt: Runtime;

beforeEach(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
});
afterEach(async () => {
  await rt.close();
  trace.disable();
  exporter.reset();
});

const spans = (operation: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((s) => s.attributes['gen_ai.operation.name'] === operation);

describe('OpenTelemetry GenAI spans', () => {
  it('a model turn is a "chat <model>" client span with provider, models and token usage; its calls are execute_tool spans', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'look around' });
    await rt.grant(p.pid, 'skill:*', ['read']);
    const provider = new ScriptedProvider([[{ tool: 'discover_skills', args: {} }]], { model: 'scripted-large' });
    await rt.run({ provider, maxQuanta: 1 });
    for (const s of exporter.getFinishedSpans()) expect(s.attributes['libos.pid']).toBe(p.pid);

    const [chat, ...more] = spans('chat');
    expect(more).toEqual([]);
    expect(chat).toMatchObject({ name: 'chat scripted-large', kind: SpanKind.CLIENT, status: { code: SpanStatusCode.UNSET } });
    expect(chat!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-large',
      'gen_ai.response.model': 'scripted-large',
      'gen_ai.usage.input_tokens': 1,
      'gen_ai.usage.output_tokens': 1,
      'libos.pid': p.pid,
      'libos.image_id': 'notes-agent:v0',
      'libos.tool_calls': 1,
    });
    const [tool] = spans('execute_tool');
    const [callId] = (await rt.events({ pid: p.pid, type: 'tool_completed' })).map((e) => e.data.call_id);
    expect(tool).toMatchObject({ name: 'execute_tool discover_skills', kind: SpanKind.INTERNAL, status: { code: SpanStatusCode.UNSET } });
    expect(tool!.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'discover_skills',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': callId,
      'libos.pid': p.pid,
      'libos.call.origin': 'model',
      'libos.call.resumed': false,
    });
  });

  it('a refused or failed tool call is an error span whose error.type is the envelope error code; host calls say so', async () => {
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'fail' });
    const unknown = await rt.call(p.pid, 'no_such_tool', {});
    expect(unknown.ok).toBe(false);
    const bad = await rt.call(p.pid, 'note_write', { key: '' });
    expect(bad.ok).toBe(false);
    const [s1, s2] = spans('execute_tool');
    for (const [span, r, tool] of [
      [s1, unknown, 'no_such_tool'],
      [s2, bad, 'note_write'],
    ] as const) {
      if (r.ok) throw new Error('expected a failed call');
      expect(span).toMatchObject({ name: `execute_tool ${tool}`, status: { code: SpanStatusCode.ERROR, message: r.error.message } });
      expect(span!.attributes).toMatchObject({ 'error.type': r.error.code, 'gen_ai.tool.call.id': r.call_id, 'libos.call.origin': 'host' });
    }
  });

  it('a provider failure is an error chat span with error.type set to its code, and no usage', async () => {
    await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    const provider: LlmProvider = {
      name: 'openai',
      model: 'gpt-test',
      async completeAction() {
        throw new LibosError('provider_error', 'the endpoint answered 503');
      },
    };
    await rt.run({ provider, maxQuanta: 1 });
    const [chat] = spans('chat');
    expect(chat).toMatchObject({ name: 'chat gpt-test', status: { code: SpanStatusCode.ERROR, message: 'the endpoint answered 503' } });
    expect(chat!.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'error.type': 'provider_error' });
    expect(chat!.attributes).not.toHaveProperty('gen_ai.usage.input_tokens');
  });

  it('without a registered SDK nothing is recorded and calls behave the same', async () => {
    trace.disable();
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await rt.grant(p.pid, 'skill:*', ['read']);
    expect(await rt.call(p.pid, 'discover_skills', {})).toMatchObject({ ok: true });
    await rt.run({ provider: new ScriptedProvider([[{ tool: 'discover_skills', args: {} }]]), maxQuanta: 1 });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
