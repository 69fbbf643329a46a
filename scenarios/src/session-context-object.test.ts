import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { contextOf, contextText, CTX_AGENT, CTX_AGENT_PROMPT, HEADING_LINE, kinds, openContextRuntime } from './support/context-harness.js';

let rt: Runtime | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const touches = (n: number) => Array.from({ length: n }, (_, i) => [{ tool: 'note_touch', args: { label: `t${i}` } }]);

describe('the LLM context Object', () => {
  it(`[S-X1] enrichment on (host policy, or context:enrichment execute) puts the heading in the prompt and keeps llm_context:<pid>; \
source_only has neither`, async () => {
    rt = await openContextRuntime({ hostConfig: { llm_context: { policy: 'llm_context_object' } } });
    const byPolicy = await rt.spawn({ goal: 'policy on' });
    // It stays live (an exit releases what a root owns, its context Object included).
    let provider = new ScriptedProvider([[{ tool: 'get_current_time', args: {} }]]);
    await rt.run({ provider, maxQuanta: 1 });
    expect(contextText(provider.requests[0]!)).toMatch(/^LLM context object:\nCache strategy: append_only_stable_prefix\n/);
    const made = await contextOf(rt, byPolicy.pid);
    expect(made.payload).toMatchObject({
      kind: 'llm_context',
      schema_version: 1,
      static_prefix: { pid: byPolicy.pid, image_id: 'base-agent:v0' },
    });
    expect(kinds(made.payload)[0]).toBe('process_started');
    const found = await rt.transaction((scope) =>
      scope
        .service<{ lookup(ns: string, n: string): Promise<{ oid: string } | null> }>('objects')
        .lookup(`process:${byPolicy.pid}`, `llm_context:${byPolicy.pid}`),
    );
    expect(found?.oid).toBe(made.oid);
    await rt.close();

    rt = await openContextRuntime(); // source_only (the default)
    const plain = await rt.spawn({ goal: 'policy off' });
    const enriched = await rt.spawn({ goal: 'enriched by a grant' });
    await rt.grant(enriched.pid, 'context:enrichment', ['execute']);
    provider = new ScriptedProvider({ processes: { '*': [[{ tool: 'get_current_time', args: {} }]] } });
    await rt.run({ provider, maxQuanta: 2 });
    const prompt = (pid: string) => provider.requests.find((r) => r.pid === pid)!;
    expect(contextText(prompt(plain.pid))).toBeNull();
    expect(prompt(plain.pid).messages[1]!.content).not.toMatch(HEADING_LINE);
    expect(await contextOf(rt, plain.pid)).toMatchObject({ oid: null, generation: null, payload: null });
    expect(contextText(prompt(enriched.pid))).toMatch(/^LLM context object:/);
    expect((await contextOf(rt, enriched.pid)).payload).not.toBeNull();
  });

  it('[S-X2] two quanta: the first render is a byte prefix of the second; a quantum appends only what changed', async () => {
    rt = await openContextRuntime({ hostConfig: { llm_context: { policy: 'llm_context_object' } } });
    const p = await rt.spawn({ goal: 'touch twice', image: CTX_AGENT });
    const provider = new ScriptedProvider([...touches(3)]);
    await rt.run({ provider, maxQuanta: 3 });
    const renders = provider.requests.map((r) => contextText(r)!);
    expect(renders).toHaveLength(3);
    for (let i = 1; i < renders.length; i++) {
      expect(renders[i]!.length).toBeGreaterThan(renders[i - 1]!.length);
      expect(renders[i]!.startsWith(renders[i - 1]!)).toBe(true);
    }
    const { payload, version } = await contextOf(rt, p.pid);
    const k = kinds(payload);
    // The process, its grants and its tool table did not change after the first quantum: one snapshot each.
    expect(k.filter((x) => x === 'process_snapshot')).toHaveLength(1);
    expect(k.filter((x) => x === 'tool_table_snapshot')).toHaveLength(1);
    // Each later quantum saw new events (its previous turn's calls) and a new tool result in the view.
    expect(k.filter((x) => x === 'events_delta')).toHaveLength(3);
    expect(k.filter((x) => x === 'memory_delta')).toHaveLength(3);
    expect(version).toBe(4); // created (1) and one write per quantum that changed something
  });

  it('[K-44] an image_only prompt: the system message is the image prompt, the user message starts with the heading', async () => {
    rt = await openContextRuntime(); // source_only: an image_only image keeps a context Object all the same
    const p = await rt.spawn({ goal: 'GOAL-TEXT-44', image: CTX_AGENT });
    const provider = new ScriptedProvider([[{ tool: 'process_exit', args: {} }]]);
    await rt.run({ provider });
    const [system, user] = provider.requests[0]!.messages;
    expect(system).toEqual({ role: 'system', content: CTX_AGENT_PROMPT });
    expect(user!.content.startsWith('LLM context object:\n')).toBe(true);
    expect(user!.content).toContain('GOAL-TEXT-44'); // the goal Object, through the context's memory delta
    expect((await contextOf(rt, p.pid)).oid).not.toBeNull();
  });

  it('the generation is durable and apart from the version: appends move the version, never the generation', async () => {
    rt = await openContextRuntime({ hostConfig: { llm_context: { policy: 'llm_context_object' } } });
    const p = await rt.spawn({ goal: 'touch', image: CTX_AGENT });
    await rt.run({ provider: new ScriptedProvider([...touches(1)]), maxQuanta: 1 });
    const first = await contextOf(rt, p.pid);
    await rt.run({ provider: new ScriptedProvider([...touches(1)]), maxQuanta: 1 });
    const second = await contextOf(rt, p.pid);
    expect(second.version).toBeGreaterThan(first.version!);
    expect(second.generation).toBe(first.generation);
    expect(first.generation).toMatch(/^ctxgen_[0-9a-f]{16}$/);
  });

  it('a reopen keeps the generation and the label high-water and loses the payload: the next quantum starts a new Object', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-ctx-'));
    dirs.push(dir);
    const path = join(dir, 'libos.db');
    rt = await openContextRuntime({ path, hostConfig: { llm_context: { policy: 'llm_context_object' } } });
    const p = await rt.spawn({ goal: 'outlive a reopen', image: CTX_AGENT });
    await rt.run({ provider: new ScriptedProvider([...touches(2)]), maxQuanta: 2 });
    const before = await contextOf(rt, p.pid);
    await rt.close();
    rt = await openContextRuntime({ path, idStart: 1000, hostConfig: { llm_context: { policy: 'llm_context_object' } } });
    const lost = await contextOf(rt, p.pid);
    expect(lost).toMatchObject({ oid: before.oid, generation: before.generation, labels: before.labels, payload: null });
    const provider = new ScriptedProvider([...touches(1)]);
    await rt.run({ provider, maxQuanta: 1 });
    const after = await contextOf(rt, p.pid);
    expect(after.oid).not.toBe(before.oid);
    expect(after.generation).toBe(before.generation);
    expect(kinds(after.payload)[0]).toBe('process_started');
    expect(contextText(provider.requests[0]!)).toMatch(/^LLM context object:/);
    expect((await rt.audit({ action: 'llm.context_created' })).map((a) => a.details.replaces)).toEqual([null, before.oid]);
  });
});
