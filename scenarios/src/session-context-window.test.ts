import { estimateInput, ScriptedProvider, type LlmProfile, type LlmToolSchema, type Runtime } from '@libos/kernel';
import { afterEach, expect, it } from 'vitest';
import { CompressorProvider, CTX_AGENT, openContextRuntime } from './support/context-harness.js';

let rt: Runtime;
afterEach(async () => rt?.close());

const WINDOW = 4000;
const RESERVE = 256;
/** An OpenAI-family model name, so maintenance counts with the real tokenizer (o200k_base). */
const MODEL = 'gpt-4o-mini';
const PROFILE: LlmProfile = {
  name: 'small',
  provider: 'script',
  model: MODEL,
  context_window: WINDOW,
  max_tokens: RESERVE,
  parallel_tool_calls: false,
};
const QUANTA = 300;

it(`a scripted agent runs ${QUANTA} quanta against a ${WINDOW}-token window: compaction keeps every prompt under it, as its \
llm_calls rows show`, async () => {
  rt = await openContextRuntime({
    contextManagement: {
      mode: 'auto_compact',
      tool: { name: 'compact_process_context', arguments: { max_chunks: 2, preserve_recent_entries: 0 } },
    },
  });
  const p = await rt.spawn({ goal: 'keep notes for a long time', image: CTX_AGENT, budget: { tool_calls: 5000, child_processes: 1000 } });
  for (const [resource, right] of [
    ['process:spawn', 'write'],
    ['image:context-compressor:v0', 'read'],
    ['context:maintenance', 'execute'],
  ] as const) {
    await rt.grant(p.pid, resource, [right]);
  }
  const turns = Array.from({ length: QUANTA }, (_, i) => [{ tool: 'note_touch', args: { label: `note ${i}` } }]);
  const inner = new ScriptedProvider({ processes: { [p.pid]: turns } }, { model: MODEL });
  const report = await rt.run({ provider: new CompressorProvider(rt, inner), profile: PROFILE, maxQuanta: QUANTA });
  expect(report.quanta).toBe(QUANTA);
  // The agent is still at work: never killed for its window, never failed.
  expect(['runnable', 'waiting_event']).toContain((await rt.process(p.pid)).status);

  const rows = await rt.llmCalls({ limit: 10_000 });
  const mine = rows.filter((r) => r.pid === p.pid);
  expect(mine.length).toBeGreaterThanOrEqual(60); // its own turns; the maintenance quanta asked no model
  expect(inner.requests.filter((r) => r.pid === p.pid)).toHaveLength(mine.length);
  expect(rows.every((r) => r.status === 'ok')).toBe(true);
  // Each row carries the input estimate the maintenance decision projected: every prompt sent was under the window.
  expect(rows.every((r) => r.inputEstimateTokens !== null && r.inputEstimateTokens + RESERVE <= WINDOW)).toBe(true);
  // Recount every prompt actually sent (its stored messages and the schemas of the tools it named) with the tokenizer.
  const schemas = new Map<string, Map<string, LlmToolSchema>>();
  let largest = 0;
  for (const row of rows) {
    if (!schemas.has(row.pid))
      schemas.set(
        row.pid,
        new Map(
          (await rt.toolSchemas(row.pid)).map((t) => [t.name, { name: t.name, description: t.description, parameters: t.inputSchema }]),
        ),
      );
    const request = row.request as { messages: { role: 'system' | 'user'; content: string }[]; tools: string[] };
    const tools = request.tools.map((n) => schemas.get(row.pid)!.get(n)!);
    const { tokens } = await estimateInput(MODEL, request.messages, tools);
    largest = Math.max(largest, tokens + RESERVE);
  }
  expect(largest).toBeLessThanOrEqual(WINDOW);
  const compactions = await rt.audit({ action: 'context.compacted' });
  expect(compactions.length).toBeGreaterThanOrEqual(10);
  const processes = await rt.processes();
  const compressors = processes.filter((x) => x.pid !== p.pid);
  expect(compressors.every((x) => x.imageId === 'context-compressor:v0' && ['exited', 'runnable'].includes(x.status))).toBe(true);
  console.log(
    `window ${WINDOW}: ${report.quanta} quanta, ${rows.length} model calls, ${compactions.length} compactions, ` +
      `largest prompt + reserve ${largest} tokens`,
  );
}, 600_000);
