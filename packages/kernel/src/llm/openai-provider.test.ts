// Long file: the OpenAI-compatible wire contract, request and response cases against one fake server.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { LibosError } from '@libos/sdk';
import { afterEach, describe, expect, test } from 'vitest';
import { OpenAiProvider, openAiProviderFromEnv, type OpenAiProviderOptions } from './openai-provider.js';
import type { LlmRequest } from './provider.js';

// ---- a local chat-completions server -------------------------------------------------------------------

interface SeenRequest {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}
type Reply = { status: number; body: unknown; headers?: Record<string, string> } | 'hang';

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  }
});

/** Starts a server on 127.0.0.1:0 answering request `i` with `reply(i)`; returns its `/v1` base URL and what it saw. */
async function startServer(reply: (index: number) => Reply): Promise<{ baseUrl: string; seen: SeenRequest[] }> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const r = reply(seen.length - 1);
      if (r === 'hang') return;
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, seen };
}

function completion(
  calls: { id: string; name: string; arguments: string }[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1_700_000_000,
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
    ...extra,
  };
}

const OK = completion([{ id: 'call_ok', name: 'process_exit', arguments: '{"message":"done"}' }]);

const REQUEST: LlmRequest = {
  messages: [
    { role: 'system', content: 'You are a libOS process.' },
    { role: 'user', content: 'Goal: finish.' },
  ],
  tools: [
    { name: 'process_exit', description: 'Ends the process.', parameters: { type: 'object', properties: { message: { type: 'string' } } } },
  ],
  parallelToolCalls: false,
};

const KEY = 'sk-test-SECRET-0123456789';

/** A provider against `baseUrl` whose backoff sleeps are recorded instead of waited. */
function provider(baseUrl: string, options: Partial<OpenAiProviderOptions> = {}): { provider: OpenAiProvider; sleeps: number[] } {
  const sleeps: number[] = [];
  const p = new OpenAiProvider({
    baseUrl,
    model: 'gpt-test',
    apiKey: KEY,
    random: () => 0,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { provider: p, sleeps };
}

async function rejection(promise: Promise<unknown>): Promise<LibosError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(LibosError);
    return err as LibosError;
  }
  throw new Error('expected a rejection');
}

// ---- tests ------------------------------------------------------------------------------------------------

describe('OpenAiProvider against a local chat-completions server', () => {
  test('[K-40] posts the chat-completions request and maps tool calls, model and usage from the response', async () => {
    const server = await startServer(() => ({ status: 200, body: OK }));
    const { provider: p } = provider(server.baseUrl, { maxTokens: 256 });
    const res = await p.completeAction(REQUEST);

    expect(res).toEqual({
      content: null,
      toolCalls: [{ id: 'call_ok', name: 'process_exit', arguments: { message: 'done' } }],
      api: 'chat',
      model: 'served-model-0125',
      usage: { prompt_tokens: 120, completion_tokens: 17, total_tokens: 137 },
      raw: OK,
    });
    expect(server.seen).toHaveLength(1);
    const [seen] = server.seen;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/v1/chat/completions');
    expect(seen.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.body).toEqual({
      model: 'gpt-test',
      messages: REQUEST.messages,
      tools: [{ type: 'function', function: REQUEST.tools[0] }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      temperature: 0.2,
      max_tokens: 256,
    });
  });

  test(`omits tools, tool_choice, parallel_tool_calls, max_tokens and Authorization when there are none, and keeps \
tool_call_id`, async () => {
    const server = await startServer(() => ({
      status: 200,
      body: { choices: [{ message: { role: 'assistant', content: 'no tools needed' } }] },
    }));
    const { provider: p } = provider(`${server.baseUrl}/`, { apiKey: undefined, temperature: 0 });
    const res = await p.completeAction({
      messages: [{ role: 'tool', content: '{"ok":true}', tool_call_id: 'call_1' }],
      tools: [],
      parallelToolCalls: true,
    });
    expect(res.content).toBe('no tools needed');
    expect(res.toolCalls).toEqual([]);
    expect(res.model).toBe('gpt-test');
    expect(res.usage).toEqual({ prompt_tokens: null, completion_tokens: null, total_tokens: null });
    expect(server.seen[0].url).toBe('/v1/chat/completions');
    expect(server.seen[0].headers.authorization).toBeUndefined();
    expect(server.seen[0].body).toEqual({
      model: 'gpt-test',
      messages: [{ role: 'tool', content: '{"ok":true}', tool_call_id: 'call_1' }],
      temperature: 0,
    });
  });

  test('retries a 429 after its Retry-After and returns the success', async () => {
    const server = await startServer((i) =>
      i === 0 ? { status: 429, body: { error: { message: 'rate limited' } }, headers: { 'retry-after': '2' } } : { status: 200, body: OK },
    );
    const { provider: p, sleeps } = provider(server.baseUrl);
    const res = await p.completeAction(REQUEST);
    expect(server.seen).toHaveLength(2);
    expect(res.toolCalls).toEqual([{ id: 'call_ok', name: 'process_exit', arguments: { message: 'done' } }]);
    expect(sleeps).toEqual([2000]);
  });

  test('caps a huge Retry-After at 30 s', async () => {
    const server = await startServer((i) =>
      i === 0 ? { status: 429, body: '{}', headers: { 'retry-after': '3600' } } : { status: 200, body: OK },
    );
    const { provider: p, sleeps } = provider(server.baseUrl);
    await p.completeAction(REQUEST);
    expect(sleeps).toEqual([30_000]);
  });

  test('retries a 500 with jittered exponential backoff and returns the success', async () => {
    const server = await startServer((i) => (i < 2 ? { status: 500, body: 'upstream exploded' } : { status: 200, body: OK }));
    const { provider: p, sleeps } = provider(server.baseUrl, { random: () => 0.5 });
    const res = await p.completeAction(REQUEST);
    expect(server.seen).toHaveLength(3);
    expect(res.toolCalls[0].id).toBe('call_ok');
    // ceiling 500 ms then 1000 ms; random 0.5 puts each at 3/4 of its ceiling
    expect(sleeps).toEqual([375, 750]);
  });

  test('[K-40] gives up after maxRetries on a persistent 503 with provider_error naming the status and attempts', async () => {
    const server = await startServer(() => ({ status: 503, body: 'overloaded' }));
    const { provider: p, sleeps } = provider(server.baseUrl, { maxRetries: 2 });
    const err = await rejection(p.completeAction(REQUEST));
    expect(server.seen).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    expect(err.code).toBe('provider_error');
    expect(err.message).toBe('openai provider: HTTP 503: overloaded');
    expect(err.details).toEqual({ status: 503, attempts: 3 });
  });

  test('tells req.onRetry before each retry (attempt, the bound, the delay, the error), never after the last attempt', async () => {
    const server = await startServer(() => ({ status: 503, body: 'overloaded' }));
    const { provider: p, sleeps } = provider(server.baseUrl, { maxRetries: 2, random: () => 0.5 });
    const retries: unknown[] = [];
    const err = await rejection(p.completeAction({ ...REQUEST, onRetry: (r) => void retries.push(r) }));
    expect(err.code).toBe('provider_error');
    const error = { code: 'provider_error', message: 'openai provider: HTTP 503: overloaded' };
    expect(retries).toEqual([
      { attempt: 1, max_attempts: 3, delay_ms: 375, error },
      { attempt: 2, max_attempts: 3, delay_ms: 750, error },
    ]);
    expect(sleeps).toEqual([375, 750]);
  });

  test('returns arguments that are not a JSON object as argumentsError + rawArguments instead of throwing', async () => {
    const server = await startServer(() => ({
      status: 200,
      body: completion([
        { id: 'call_bad', name: 'write_object', arguments: '{"name": "notes", "payload": ' },
        { id: 'call_array', name: 'write_object', arguments: '[1, 2]' },
        { id: 'call_empty', name: 'whoami', arguments: '' },
        { id: 'call_good', name: 'read_object', arguments: '{"name":"notes"}' },
      ]),
    }));
    const { provider: p } = provider(server.baseUrl);
    const res = await p.completeAction(REQUEST);
    const [bad, array, empty, good] = res.toolCalls;
    expect(bad).toMatchObject({ id: 'call_bad', name: 'write_object', arguments: {}, rawArguments: '{"name": "notes", "payload": ' });
    expect(bad.argumentsError).toMatch(/^arguments are not a JSON object: .+/);
    expect(array).toEqual({
      id: 'call_array',
      name: 'write_object',
      arguments: {},
      argumentsError: 'arguments are not a JSON object: got an array',
      rawArguments: '[1, 2]',
    });
    expect(empty).toEqual({ id: 'call_empty', name: 'whoami', arguments: {} });
    expect(good).toEqual({ id: 'call_good', name: 'read_object', arguments: { name: 'notes' } });
  });

  test('times out a server that never answers with provider_timeout after a bounded number of attempts', async () => {
    const server = await startServer(() => 'hang');
    const { provider: p, sleeps } = provider(server.baseUrl, { timeoutMs: 200, maxRetries: 1 });
    const started = Date.now();
    const err = await rejection(p.completeAction(REQUEST));
    expect(err.code).toBe('provider_timeout');
    expect(err.message).toBe('openai provider: no response within 200 ms');
    expect(err.details).toEqual({ timeoutMs: 200, attempts: 2 });
    expect(server.seen).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('fails a 401 with provider_error at once, without retry and without the API key in the message', async () => {
    const longBody = `{"error":{"message":"Incorrect API key provided: ${KEY}. ${'x'.repeat(800)}"}}`;
    const server = await startServer(() => ({ status: 401, body: longBody }));
    const { provider: p, sleeps } = provider(server.baseUrl);
    const err = await rejection(p.completeAction(REQUEST));
    expect(server.seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(err.code).toBe('provider_error');
    expect(err.message).toMatch(/^openai provider: HTTP 401: \{"error":\{"message":"Incorrect API key provided: \[redacted\]\. x+$/);
    expect(err.message).not.toContain(KEY);
    expect(JSON.stringify(err.toJSON())).not.toContain(KEY);
    // the excerpt is the body's first 500 characters (before redaction)
    expect(err.message.length).toBeLessThan('openai provider: HTTP 401: '.length + 500);
    expect(err.details).toEqual({ status: 401, attempts: 1 });
  });

  test('fails a body that is not JSON, or has no choices, with provider_error and no retry', async () => {
    const notJson = await startServer(() => ({ status: 200, body: '<html>gateway</html>' }));
    const a = provider(notJson.baseUrl);
    const errA = await rejection(a.provider.completeAction(REQUEST));
    expect(errA).toMatchObject({
      code: 'provider_error',
      message: 'openai provider: malformed response: body is not JSON: <html>gateway</html>',
    });
    expect(notJson.seen).toHaveLength(1);

    const noChoices = await startServer(() => ({ status: 200, body: { object: 'chat.completion', choices: [] } }));
    const b = provider(noChoices.baseUrl);
    const errB = await rejection(b.provider.completeAction(REQUEST));
    expect(errB).toMatchObject({ code: 'provider_error', message: 'openai provider: malformed response: no choices' });
    expect(noChoices.seen).toHaveLength(1);
    expect(b.sleeps).toEqual([]);
  });

  test('fails a tool call without a function name with provider_error', async () => {
    const server = await startServer(() => ({ status: 200, body: completion([{ id: 'c', name: '', arguments: '{}' }]) }));
    const err = await rejection(provider(server.baseUrl).provider.completeAction(REQUEST));
    expect(err).toMatchObject({
      code: 'provider_error',
      message: 'openai provider: malformed response: choices[0].message.tool_calls[0].function.name is missing',
    });
  });

  test('retries network errors and then fails with provider_error', async () => {
    const server = await startServer(() => ({ status: 200, body: OK }));
    const closed = servers.pop() as Server;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { provider: p, sleeps } = provider(server.baseUrl, { maxRetries: 2 });
    const err = await rejection(p.completeAction(REQUEST));
    expect(err.code).toBe('provider_error');
    expect(err.message).toMatch(/^openai provider: network error: /);
    expect(err.details).toEqual({ attempts: 3 });
    expect(sleeps).toHaveLength(2);
  });

  test('rejects with cancelled, without retrying, when the caller aborts', async () => {
    const server = await startServer(() => 'hang');
    const controller = new AbortController();
    const { provider: p, sleeps } = provider(server.baseUrl, { timeoutMs: 10_000 });
    const pending = p.completeAction({ ...REQUEST, signal: controller.signal });
    while (server.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    const err = await rejection(pending);
    expect(err.code).toBe('cancelled');
    expect(server.seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  test('never throws a non-LibosError, even when the injected fetch throws something odd', async () => {
    const { provider: p } = provider('http://127.0.0.1:9/v1', {
      maxRetries: 0,
      fetch: () => {
        throw 'not an error object';
      },
    });
    const err = await rejection(p.completeAction(REQUEST));
    expect(err).toMatchObject({ code: 'provider_error', message: 'openai provider: network error: not an error object' });
  });

  test('does not show the API key when the provider is inspected or serialized', () => {
    const { provider: p } = provider('http://127.0.0.1:9/v1');
    expect(inspect(p, { depth: 5 })).not.toContain(KEY);
    expect(JSON.stringify(p)).not.toContain(KEY);
  });

  test('validates its options with invalid_arguments', () => {
    expect(() => new OpenAiProvider({ model: '' })).toThrow(
      expect.objectContaining({ code: 'invalid_arguments', message: 'openai provider: model: required' }),
    );
    expect(() => new OpenAiProvider({ model: 'm', baseUrl: 'not a url' })).toThrow(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(() => new OpenAiProvider({ model: 'm', baseUrl: 'ftp://example.com' })).toThrow(
      expect.objectContaining({ code: 'invalid_arguments' }),
    );
    expect(() => new OpenAiProvider({ model: 'm', timeoutMs: 0 })).toThrow(
      expect.objectContaining({ message: 'openai provider: timeoutMs: must be a positive number (got 0)' }),
    );
    expect(() => new OpenAiProvider({ model: 'm', maxRetries: 1.5 })).toThrow(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(new OpenAiProvider({ model: 'm' })).toMatchObject({
      baseUrl: 'https://api.openai.com/v1',
      timeoutMs: 60_000,
      maxRetries: 3,
      temperature: 0.2,
    });
  });
});

describe('openAiProviderFromEnv', () => {
  test('prefers LIBOS_OPENAI_* over OPENAI_* for base URL, model and key', async () => {
    const libos = await startServer(() => ({ status: 200, body: OK }));
    const plain = await startServer(() => ({ status: 200, body: OK }));
    const p = openAiProviderFromEnv(
      {
        LIBOS_OPENAI_BASE_URL: libos.baseUrl,
        OPENAI_BASE_URL: plain.baseUrl,
        LIBOS_OPENAI_MODEL: 'libos-model',
        OPENAI_MODEL: 'plain-model',
        LIBOS_OPENAI_API_KEY: 'libos-key',
        OPENAI_API_KEY: 'plain-key',
      },
      { sleep: async () => {} },
    );
    await p.completeAction(REQUEST);
    expect(plain.seen).toHaveLength(0);
    expect(libos.seen[0].body.model).toBe('libos-model');
    expect(libos.seen[0].headers.authorization).toBe('Bearer libos-key');
  });

  test('falls back to OPENAI_* when LIBOS_OPENAI_* are unset or empty', async () => {
    const plain = await startServer(() => ({ status: 200, body: OK }));
    const p = openAiProviderFromEnv({
      LIBOS_OPENAI_MODEL: '',
      OPENAI_BASE_URL: plain.baseUrl,
      OPENAI_MODEL: 'plain-model',
      OPENAI_API_KEY: 'plain-key',
    });
    await p.completeAction(REQUEST);
    expect(plain.seen[0].body.model).toBe('plain-model');
    expect(plain.seen[0].headers.authorization).toBe('Bearer plain-key');
  });

  test('lets explicit overrides win over the environment', async () => {
    const server = await startServer(() => ({ status: 200, body: OK }));
    const p = openAiProviderFromEnv(
      { LIBOS_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', LIBOS_OPENAI_MODEL: 'env-model' },
      { baseUrl: server.baseUrl, model: 'override-model', apiKey: 'override-key' },
    );
    await p.completeAction(REQUEST);
    expect(server.seen[0].body.model).toBe('override-model');
    expect(server.seen[0].headers.authorization).toBe('Bearer override-key');
  });

  test('fails with invalid_arguments naming LIBOS_OPENAI_MODEL when no model is configured', () => {
    expect(() => openAiProviderFromEnv({ OPENAI_API_KEY: 'k' })).toThrow(
      expect.objectContaining({
        code: 'invalid_arguments',
        message: expect.stringContaining('LIBOS_OPENAI_MODEL'),
        details: { variable: 'LIBOS_OPENAI_MODEL' },
      }),
    );
  });
});
