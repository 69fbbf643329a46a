import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAiProvider, ScriptedProvider, type OpenAiProviderOptions } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { openHarness, spawnProbe, type Harness, type Json } from './support/kernel-harness.js';

// The OpenAI-compatible provider driven through the runtime (issue 5 acceptance): a chat-completions server the test
// starts on 127.0.0.1 answers with tool calls; the scheduler runs real quanta against it. A full run to
// process_exit, a 429 then success, a malformed arguments string, a timeout: none crash the runtime.

interface Seen {
  readonly headers: IncomingHttpHeaders;
  readonly body: Json;
}
type Reply = { status: number; body: unknown; headers?: Record<string, string> } | 'hang';

const servers: Server[] = [];
let h: Harness | undefined;
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  }
});

/** A chat-completions endpoint on 127.0.0.1 answering request i with `reply(i, body)`. */
async function chatServer(reply: (i: number, body: Json) => Reply): Promise<{ baseUrl: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      seen.push({ headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const r = reply(seen.length - 1, body);
      if (r === 'hang') return;
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

/** A chat completion whose message carries these tool calls (`arguments` is the raw wire string). */
function toolCalls(calls: { id: string; name: string; arguments: string }[]): Reply {
  return {
    status: 200,
    body: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      model: 'served-model-0125',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 120, completion_tokens: 17, total_tokens: 137 },
    },
  };
}

const EXIT = toolCalls([{ id: 'call_exit', name: 'process_exit', arguments: '{"message":"done"}' }]);

function provider(baseUrl: string, extra: Partial<OpenAiProviderOptions> = {}): { provider: OpenAiProvider; delays: number[] } {
  const delays: number[] = [];
  const p = new OpenAiProvider({
    baseUrl,
    model: 'test-model',
    apiKey: 'sk-test-key',
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    ...extra,
  });
  return { provider: p, delays };
}

/** The user message of a chat request. */
const userText = (s: Seen) => (s.body.messages as Json[]).find((m) => m.role === 'user').content as string;

describe('OpenAI-compatible provider through the runtime', () => {
  it('a full run to process_exit: tool calls dispatched, every call recorded with its usage and charged', async () => {
    h = await openHarness();
    const { rt, probe } = h;
    const pid = await spawnProbe(rt, 'touch once, then exit');
    const { baseUrl, seen } = await chatServer((i) =>
      i === 0 ? toolCalls([{ id: 'call_touch', name: 'probe_touch', arguments: '{"label":"via-openai"}' }]) : EXIT,
    );
    const report = await rt.run({ provider: provider(baseUrl).provider });

    expect(report.idle).toBe(true);
    expect(probe.runs).toEqual(['via-openai']);
    expect(await rt.process(pid)).toMatchObject({ status: 'exited', outcome: { kind: 'exited' } });
    expect(seen).toHaveLength(2);
    const first = seen[0]!;
    expect(first.headers.authorization).toBe('Bearer sk-test-key');
    expect(first.body).toMatchObject({ model: 'test-model', tool_choice: 'auto' });
    expect(first.body.messages.map((m: Json) => m.role)).toEqual(['system', 'user']);
    const touchTool = first.body.tools.find((t: Json) => t.function.name === 'probe_touch');
    expect(touchTool).toMatchObject({ type: 'function', function: { parameters: { type: 'object', required: ['label'] } } });
    // The tool's result reached the second (stateless) prompt through the MemoryView.
    expect(userText(seen[0]!)).not.toContain('via-openai');
    expect(userText(seen[1]!)).toContain('via-openai');

    const rows = await rt.llmCalls({ pid });
    expect(rows.map((r) => [r.provider, r.model, r.status, r.promptTokens, r.completionTokens, r.totalTokens])).toEqual([
      ['openai', 'served-model-0125', 'ok', 120, 17, 137],
      ['openai', 'served-model-0125', 'ok', 120, 17, 137],
    ]);
    expect(JSON.stringify(rows)).not.toContain('sk-test-key');
    expect((await rt.budget(pid)).usage).toMatchObject({ llm_calls: 2, llm_total_tokens: 274 });
  });

  it('a 429 (and a 503) then success: the provider backs off and retries inside one model call; the process exits', async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'exit despite rate limits');
    const { baseUrl, seen } = await chatServer((i) =>
      i === 0
        ? { status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '2' } }
        : i === 1
          ? { status: 503, body: { error: { message: 'busy' } } }
          : EXIT,
    );
    const p = provider(baseUrl);
    await rt.run({ provider: p.provider });
    expect(seen).toHaveLength(3);
    expect(p.delays).toHaveLength(2);
    expect(p.delays[0]).toBe(2_000); // Retry-After honoured
    expect(await rt.process(pid)).toMatchObject({ status: 'exited' });
    expect(await rt.llmCalls({ pid })).toMatchObject([{ status: 'ok', totalTokens: 137 }]);
    expect((await rt.budget(pid)).usage).toMatchObject({ llm_calls: 1, llm_total_tokens: 137 });
  });

  it('a malformed arguments string comes back to the model as an invalid_arguments tool failure, shown in its next prompt', async () => {
    h = await openHarness();
    const { rt, probe } = h;
    const pid = await spawnProbe(rt, 'recover from a bad call');
    const { baseUrl, seen } = await chatServer((i) =>
      i === 0
        ? toolCalls([
            { id: 'call_bad', name: 'probe_touch', arguments: '{"label": "unterminated' },
            { id: 'call_next', name: 'probe_touch', arguments: '{"label":"after-bad"}' },
          ])
        : i === 1
          ? toolCalls([{ id: 'call_good', name: 'probe_touch', arguments: '{"label":"fixed"}' }])
          : EXIT,
    );
    const report = await rt.run({ provider: provider(baseUrl).provider });

    expect(report.results[0]).toMatchObject({
      pid,
      kind: 'turn',
      stopReason: 'tool_failed',
      executed: ['probe_touch'],
      skipped: ['probe_touch'],
    });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect((report.results[0]!.results[0] as Json).error.message).toContain('not a JSON object');
    // The bad call ran nothing, and the batch stopped there.
    expect(probe.runs).toEqual(['fixed']);
    const failed = (await rt.audit({ action: 'tool.call' })).find((a) => a.decision === 'invalid_arguments')!;
    expect(failed).toMatchObject({ actor: pid, target: 'tool:probe_touch' });
    // The next prompt tells the model what went wrong.
    const next = userText(seen[1]!);
    expect(next).toContain(`${failed.callId} probe_touch: invalid_arguments`);
    expect(next).toContain('not a JSON object');
    expect(await rt.process(pid)).toMatchObject({ status: 'exited' });
  });

  it(`[K-40] a timeout on every attempt is recorded as an error, each retry is an llm_retry event, and the process is paused with the \
error; the runtime keeps running others`, async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'talk to a model that never answers');
    const { baseUrl, seen } = await chatServer(() => 'hang');
    const p = provider(baseUrl, { timeoutMs: 50, maxRetries: 1 });
    const report = await rt.run({ provider: p.provider });
    expect(report).toMatchObject({ idle: true, quanta: 1, results: [{ pid, kind: 'paused', error: { code: 'provider_timeout' } }] });
    expect(seen).toHaveLength(2);
    expect(await rt.process(pid)).toMatchObject({
      status: 'paused',
      waitState: { kind: 'paused', reason: expect.stringMatching(/^model provider failed: provider_timeout: /) },
    });
    const retries = await rt.events({ type: 'llm_retry' });
    expect(retries.map((e) => e.data)).toEqual([
      {
        pid,
        provider: 'openai',
        model: 'test-model',
        attempt: 1,
        max_attempts: 2,
        delay_ms: p.delays[0],
        error: { code: 'provider_timeout', message: 'openai provider: no response within 50 ms' },
      },
    ]);
    expect(retries[0]!.seq).toBeLessThan((await rt.events({ type: 'llm_call', pid }))[0]!.seq);
    const [row] = await rt.llmCalls({ pid });
    expect(row).toMatchObject({ status: 'error', provider: 'openai', model: 'test-model', response: null, totalTokens: null });
    expect(row!.error).toMatch(/^provider_timeout: openai provider: no response within 50 ms/);
    expect((await rt.budget(pid)).usage).toMatchObject({ llm_calls: 1, llm_total_tokens: 0 });

    const next = await spawnProbe(rt, 'still works');
    await rt.run({ provider: new ScriptedProvider([]) });
    expect((await rt.process(next)).status).toBe('exited');
  });

  it('a non-retryable 400 and a body that is not JSON are provider errors: recorded, the process is paused, nothing crashes', async () => {
    h = await openHarness();
    const { rt } = h;
    const bad = await spawnProbe(rt, 'bad request');
    const garbled = await spawnProbe(rt, 'garbled reply');
    const { baseUrl, seen } = await chatServer((_i, body) => {
      const text = JSON.stringify(body.messages);
      return text.includes('garbled reply')
        ? { status: 200, body: '<html>gateway</html>' }
        : { status: 400, body: { error: { message: 'bad tool schema' } } };
    });
    await rt.run({ provider: provider(baseUrl).provider });
    expect(seen).toHaveLength(2); // neither is retried
    for (const pid of [bad, garbled]) {
      expect(await rt.process(pid)).toMatchObject({
        status: 'paused',
        waitState: { reason: expect.stringMatching(/^model provider failed: provider_error: /) },
      });
      expect((await rt.llmCalls({ pid })).map((r) => r.status)).toEqual(['error']);
    }
    expect((await rt.llmCalls({ pid: bad }))[0]!.error).toContain('HTTP 400');
    expect((await rt.llmCalls({ pid: garbled }))[0]!.error).toContain('not JSON');
    expect(await rt.events({ type: 'llm_retry' })).toEqual([]);
  });
});
