import { definePlugin, defineTool, skillFromText, z } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../llm/scripted-provider.js';
import { openRuntime, type Runtime } from '../runtime.js';

// When a model's reply commits relative to its batch (K-9.4): a reply's `llm_call` event reaches watchers when its unit
// commits, so each tool below reports whether the reply that asked for it had committed when it ran.

const SKILL = `---
name: peek
description: Tools that report whether their turn's reply has committed.
allowed-tools: peek_store_only peek_side_effects
---
Call a peek tool.
`;

let committedReplies: string[];
let rt: Runtime;

const peekInput = z.object({});
function peekPlugin() {
  const run = async (_args: unknown, ctx: { readonly pid: string }) => ({ reply_committed: committedReplies.includes(ctx.pid) });
  return definePlugin({
    name: 'peek',
    version: '0.0.0',
    skills: [skillFromText(SKILL, 'peek')],
    tools: [
      defineTool({ name: 'peek_store_only', description: 'Works only in the store.', input: peekInput, run }),
      defineTool({
        name: 'peek_side_effects',
        description: 'Declares effects outside the store.',
        input: peekInput,
        policy: { sideEffects: true },
        run,
      }),
    ],
  });
}

beforeEach(async () => {
  committedReplies = [];
  rt = await openRuntime({ path: ':memory:', plugins: [peekPlugin()] });
  rt.watch({ event: (e) => (e.type === 'llm_call' && e.pid ? committedReplies.push(e.pid) : undefined) });
});
afterEach(async () => {
  await rt.close();
});

async function turnCalling(tool: string) {
  const p = await rt.spawn({ goal: 'peek' });
  await rt.activateSkill(p.pid, 'peek');
  const provider = new ScriptedProvider({ processes: { [p.pid]: [[{ tool, args: {} }]] } });
  const report = await rt.run({ provider, maxQuanta: 1 });
  const [r] = report.results[0]!.results;
  expect(r).toMatchObject({ ok: true });
  return { pid: p.pid, payload: (r as { payload: { reply_committed: boolean } }).payload };
}

describe('a quantum’s units of work', () => {
  it('[K-9.4] a batch with a tool that declares side effects runs after its reply has committed', async () => {
    const { pid, payload } = await turnCalling('peek_side_effects');
    expect(payload.reply_committed).toBe(true);
    expect(await rt.llmCalls({ pid })).toHaveLength(1);
  });

  it('[K-9.4] a batch of store-only tools commits with its reply: one unit, both there after it', async () => {
    const { pid, payload } = await turnCalling('peek_store_only');
    expect(payload.reply_committed).toBe(false);
    expect(committedReplies).toEqual([pid]);
    expect(await rt.llmCalls({ pid })).toHaveLength(1);
    expect((await rt.audit({ pid, action: 'tool.call' })).map((a) => a.target)).toEqual(['tool:peek_store_only']);
  });
});
