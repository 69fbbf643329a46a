import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { capabilities } from '@libos/capabilities';
import { estimateInput, openRuntime, providerFromProfile, ScriptedProvider, type HostConfigInput, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, describe, expect, it } from 'vitest';

// LLM profiles of the host config: a run with a profile sends its model, max_tokens and parallel_tool_calls to the
// provider; with parallel_tool_calls false the kernel runs only the last valid call of a reply (one action a turn).

let rt: Runtime | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  }
});

const profile = (over: { parallel_tool_calls?: boolean } = {}) => ({
  provider: 'script' as const,
  model: 'scripted-small',
  context_window: 128_000,
  max_tokens: 256,
  ...over,
});

async function open(hostConfig: HostConfigInput): Promise<{ rt: Runtime; pid: string }> {
  const plugins = [capabilities(), objectMemory(), session()];
  rt = await openRuntime({ path: ':memory:', plugins, hostConfig, config: { ids: sequentialIds() } });
  const p = await rt.spawn({ goal: 'note, then exit' });
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  return { rt, pid: p.pid };
}

const note = (name: string) => ({ tool: 'create_memory_object', args: { type: 'observation', name, payload: { n: name } } });
const names = async (r: Runtime, pid: string) => (await r.llmCalls({ pid })).length;

describe('parallel_tool_calls of an LLM profile', () => {
  it('[S-B1] off: of [create_memory_object, process_exit] only the exit runs; the create is dropped and never runs', async () => {
    const { rt: r, pid } = await open({ llm_profiles: { one: profile() } });
    const provider = new ScriptedProvider([[note('a'), { tool: 'process_exit', args: {} }]]);
    const report = await r.run({ provider, profile: 'one' });
    expect(report.results[0]).toMatchObject({ executed: ['process_exit'], skipped: ['create_memory_object'] });
    expect((await r.process(pid)).status).toBe('exited');
    expect(provider.requests[0]!.parallelToolCalls).toBe(false);
    const [batch] = await r.audit({ pid, action: 'llm.action_batch' });
    expect(batch!.details).toMatchObject({
      requested: ['create_memory_object', 'process_exit'],
      executed: ['process_exit'],
      dropped: ['create_memory_object'],
      dropped_reason: 'parallel_tool_calls_disabled',
    });
    expect(await r.audit({ pid, action: 'tool.call' })).toHaveLength(1);
    expect(await names(r, pid)).toBe(1);
  });

  it('[S-B1] off: a last call with invalid arguments is passed over for the last valid one', async () => {
    const { rt: r, pid } = await open({ llm_profiles: { one: profile() } });
    const provider = new ScriptedProvider([[note('a'), note('b'), { tool: 'create_memory_object', args: { type: 'nonsense' } }]]);
    const report = await r.run({ provider, profile: 'one', maxQuanta: 1 });
    const dropped = ['create_memory_object', 'create_memory_object'];
    expect(report.results[0]).toMatchObject({ executed: ['create_memory_object'], skipped: dropped });
    const listed = await r.call(pid, 'list_memory_namespace', {});
    const objects = (listed as { payload: { objects: { name: string; type: string }[] } }).payload.objects;
    expect(objects.filter((o) => o.type === 'observation').map((o) => o.name)).toEqual(['b']);
  });

  it('on: the whole batch runs in order, and the provider is told parallel calls are allowed', async () => {
    const { rt: r, pid } = await open({ llm_profiles: { many: profile({ parallel_tool_calls: true }) } });
    const provider = new ScriptedProvider([[note('a'), { tool: 'process_exit', args: {} }]]);
    const report = await r.run({ provider, profile: 'many' });
    expect(report.results[0]).toMatchObject({ executed: ['create_memory_object', 'process_exit'], skipped: [] });
    expect(provider.requests[0]!.parallelToolCalls).toBe(true);
    expect((await r.process(pid)).status).toBe('exited');
  });

  it('an unknown profile name fails the run naming the configured ones, before any model call', async () => {
    const { rt: r, pid } = await open({ llm_profiles: { one: profile() } });
    const run = r.run({ provider: new ScriptedProvider([]), profile: 'two' });
    await expect(run).rejects.toThrow(/no llm profile named "two" \(configured: one\)/);
    expect(await names(r, pid)).toBe(0);
  });
});

/** A chat-completions endpoint on 127.0.0.1 that records each request body and answers with these tool calls. */
async function chatServer(calls: readonly { name: string; arguments: string }[]): Promise<{ baseUrl: string; bodies: any[] }> {
  const bodies: any[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      const toolCalls = calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c }));
      const message = { role: 'assistant', content: null, tool_calls: toolCalls };
      const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', model: 'served', choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage }));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies };
}

describe('an openai profile against a local OpenAI-compatible server', () => {
  it('[S-B1] sends the profile model, max_tokens and parallel_tool_calls=false; of the two calls returned only the last runs', async () => {
    const { baseUrl, bodies } = await chatServer([
      { name: 'create_memory_object', arguments: JSON.stringify(note('a').args) },
      { name: 'process_exit', arguments: '{}' },
    ]);
    const small = { provider: 'openai' as const, model: 'small-model', base_url: baseUrl, context_window: 128_000, max_tokens: 300 };
    const { rt: r, pid } = await open({ llm_profiles: { small }, default_profile: 'small' });
    const chosen = r.llmProfile()!;
    expect(chosen).toMatchObject({ name: 'small', parallel_tool_calls: false });
    await r.run({ provider: providerFromProfile(chosen, { env: {} }), profile: chosen });
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({ model: 'small-model', max_tokens: 300, parallel_tool_calls: false });
    expect((await r.process(pid)).status).toBe('exited');
    expect((await r.audit({ pid, action: 'tool.call' })).map((a) => a.target)).toEqual(['tool:process_exit']);
    const [call] = await r.llmCalls({ pid });
    expect(call).toMatchObject({ provider: 'openai', status: 'ok' });
  });
});

describe('the input estimate on llm_calls rows', () => {
  it(`a run with a profile records on each row the input estimate maintenance projected: the tokenizer count of the prompt \
sent`, async () => {
    const model = 'gpt-4o-mini'; // OpenAI family: the real tokenizer counts
    const { rt: r, pid } = await open({ llm_profiles: { one: { ...profile(), model } } });
    const provider = new ScriptedProvider([[note('a')], [note('b')], [{ tool: 'process_exit', args: {} }]], { model });
    await r.run({ provider, profile: 'one' });
    const rows = await r.llmCalls({ pid });
    expect(rows).toHaveLength(3);
    const schemas = new Map(
      (await r.toolSchemas(pid)).map((t) => [t.name, { name: t.name, description: t.description, parameters: t.inputSchema }]),
    );
    for (const row of rows) {
      const sent = row.request as { messages: { role: 'system' | 'user'; content: string }[]; tools: string[] };
      const recount = await estimateInput(
        model,
        sent.messages,
        sent.tools.map((n) => schemas.get(n)!),
      );
      expect(recount.method).toBe('o200k_base');
      expect(row.inputEstimateTokens).toBe(recount.tokens);
      expect(row.inputEstimateTokens! + 256).toBeLessThanOrEqual(128_000);
    }
    // Without a profile nothing is projected, and the row says so.
    const other = await r.spawn({ goal: 'no profile' });
    await r.run({ provider: new ScriptedProvider({ processes: { [other.pid]: [[{ tool: 'process_exit', args: {} }]] } }) });
    expect((await r.llmCalls({ pid: other.pid })).map((c) => c.inputEstimateTokens)).toEqual([null]);
  });
});
