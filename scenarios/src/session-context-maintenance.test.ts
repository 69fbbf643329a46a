import { ScriptedProvider, STORAGE_TRIGGER_BYTES, type LlmProfile, type Runtime } from '@libos/kernel';
import { afterEach, expect, it } from 'vitest';
import {
  CompressorProvider,
  contextOf,
  contextText,
  CTX_AGENT,
  HEADING_LINE,
  jobOf,
  kinds,
  openContextRuntime,
  PRESSURE_NOTICE,
  TALK_AGENT,
} from './support/context-harness.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const COMPRESSOR = 'context-compressor:v0';
let rt: Runtime;
afterEach(async () => rt?.close());

/** A run profile with a 4,000-token window and a 256-token reply reserve (batches allowed, as scripts use them). */
const PROFILE: LlmProfile = {
  name: 'small',
  provider: 'script',
  model: 'scripted',
  context_window: 4000,
  max_tokens: 256,
  parallel_tool_calls: true,
};
const touches = (n: number, size = 0) => Array.from({ length: n }, (_, i) => [{ tool: 'note_touch', args: { label: `t${i}`, size } }]);
const children = async (pid: string) => (await rt.processes()).filter((p) => p.parentPid === pid);

it(`[S-X22] auto_compact without context:maintenance dispatches nothing (recorded not_authorized, once per episode); a manual call works \
without it`, async () => {
  // Under pressure from the first prompt:
  rt = await openContextRuntime({ contextManagement: { mode: 'auto_compact', thresholdRatio: 0.1 } });
  const p = await rt.spawn({ goal: 'work under pressure', image: CTX_AGENT });
  await rt.grant(p.pid, 'process:spawn', ['write']);
  await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
  const provider = new CompressorProvider(rt, new ScriptedProvider({ processes: { [p.pid]: touches(3) } }));
  const report = await rt.run({ provider, profile: PROFILE, maxQuanta: 3 });
  expect(report.results.map((r) => r.executed)).toEqual([['note_touch'], ['note_touch'], ['note_touch']]);
  const decisions = (await rt.audit({ pid: p.pid, action: 'llm.context_maintenance' })).map((a) => a.decision);
  expect(decisions).toEqual(['not_authorized']);
  expect(await children(p.pid)).toEqual([]);
  expect(await jobOf(rt, p.pid)).toBeNull();
  // The manual call needs only what compaction itself needs.
  expect(await rt.call(p.pid, 'compact_process_context', { force: true, max_chunks: 1 })).toMatchObject({
    ok: true,
    wait: { kind: 'child' },
  });
  const after = await rt.run({ provider, profile: PROFILE, maxQuanta: 2 });
  expect(after.results[1]!.results[0]).toMatchObject({ ok: true, payload: { compacted: true } });
});

it(`auto_compact with context:maintenance: the quantum dispatches the compaction through the broker instead of a model call, once per \
pressure episode`, async () => {
  rt = await openContextRuntime({
    contextManagement: {
      mode: 'auto_compact',
      thresholdRatio: 0.1,
      tool: { name: 'compact_process_context', arguments: { max_chunks: 1, preserve_recent_entries: 1 } },
    },
  });
  const p = await rt.spawn({ goal: 'work under pressure', image: CTX_AGENT });
  await rt.grant(p.pid, 'process:spawn', ['write']);
  await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
  await rt.grant(p.pid, 'context:maintenance', ['execute']);
  const inner = new ScriptedProvider({ processes: { [p.pid]: touches(3) } });
  const report = await rt.run({ provider: new CompressorProvider(rt, inner), profile: PROFILE, maxQuanta: 5 });
  const caller = report.results.filter((r) => r.pid === p.pid);
  expect(caller.map((r) => `${r.kind}:${r.executed.join(',')}:${r.stopReason}`)).toEqual([
    'turn:compact_process_context:waiting_child', // no model call: the maintenance call parked the quantum
    'resumed:compact_process_context:completed',
    'turn:note_touch:completed',
    'turn:note_touch:completed',
  ]);
  expect(inner.requests.filter((r) => r.pid === p.pid)).toHaveLength(2);
  const decisions = (await rt.audit({ pid: p.pid, action: 'llm.context_maintenance' })).map((a) => a.decision);
  expect(decisions).toEqual(['dispatched']); // the episode never ended (10% is always passed): one attempt
  const [dispatched] = await rt.audit({ pid: p.pid, action: 'llm.context_maintenance' });
  expect(dispatched!.details).toMatchObject({ window: 4000, reserve: 256, mode: 'auto_compact', tool: 'compact_process_context' });
  expect(kinds((await contextOf(rt, p.pid)).payload)[0]).toBe('context_compacted');
  const call = (await rt.audit({ pid: p.pid, action: 'tool.call' })).find((a) => a.target === 'tool:compact_process_context');
  expect(call).toBeDefined(); // a normal broker call: audited like any other
});

it('[S-X23] source_only with a pressure notice: no heading and no Object; compact (forced or not) fails and creates nothing', async () => {
  rt = await openContextRuntime();
  const p = await rt.spawn({ goal: 'talk under pressure', image: TALK_AGENT });
  await rt.grant(p.pid, 'process:spawn', ['write']);
  await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
  const inner = new ScriptedProvider({
    processes: { [p.pid]: [[{ tool: 'compact_process_context', args: {} }], [{ tool: 'compact_process_context', args: { force: true } }]] },
  });
  const wide: LlmProfile = { ...PROFILE, name: 'wide', context_window: 32_000 }; // a libos_default prompt is larger
  const report = await rt.run({ provider: inner, profile: wide, maxQuanta: 2 });
  const user = inner.requests[0]!.messages[1]!.content;
  expect(user).toContain(PRESSURE_NOTICE);
  expect(user).toMatch(/Window 32000 tokens; input about \d+; reply reserve 256; projected \d+ \(\d+\.\d% of the window\)\./);
  expect(user).not.toMatch(HEADING_LINE);
  expect(contextText(inner.requests[0]!)).toBeNull();
  for (const r of report.results) expect(r.results[0]).toMatchObject({ ok: false, error: { code: 'object_not_found' } });
  expect(await children(p.pid)).toEqual([]);
  expect(await jobOf(rt, p.pid)).toBeNull();
  expect((await contextOf(rt, p.pid)).oid).toBeNull();
});

it(`the storage trigger: a context payload past 96,000 bytes is compacted (max_chunks 4, preserve 0) whatever the mode and without a \
window`, async () => {
  rt = await openContextRuntime({ contextManagement: { mode: 'disabled' } });
  const p = await rt.spawn({ goal: 'write big notes', image: CTX_AGENT });
  await rt.grant(p.pid, 'process:spawn', ['write']);
  await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
  const inner = new ScriptedProvider({ processes: { [p.pid]: touches(8, 20_000) } });
  const report = await rt.run({ provider: new CompressorProvider(rt, inner), maxQuanta: 30 });
  const [trigger] = await rt.audit({ pid: p.pid, action: 'llm.context_maintenance' });
  expect(trigger).toMatchObject({
    decision: 'storage_trigger',
    details: { trigger_bytes: STORAGE_TRIGGER_BYTES, arguments: { force: true, max_chunks: 4, preserve_recent_entries: 0 } },
  });
  expect((trigger!.details as Json).payload_bytes).toBeGreaterThanOrEqual(STORAGE_TRIGGER_BYTES);
  const [compacted] = await rt.audit({ action: 'context.compacted' });
  expect(compacted!.details).toMatchObject({ compacted: true, preserved_recent_entries: 0 });
  expect((compacted!.details as Json).compressor_pids).toHaveLength(4);
  expect(report.results.some((r) => r.pid === p.pid && r.executed.includes('compact_process_context'))).toBe(true);
});

it('the storage trigger fails the process when its compaction cannot run', async () => {
  rt = await openContextRuntime({ contextManagement: { mode: 'disabled' } });
  const p = await rt.spawn({ goal: 'write big notes, no spawn right', image: CTX_AGENT });
  const inner = new ScriptedProvider({ processes: { [p.pid]: touches(8, 20_000) } });
  await rt.run({ provider: inner, maxQuanta: 10 });
  expect(await rt.process(p.pid)).toMatchObject({ status: 'failed', outcome: { code: 'permission_denied' } });
  expect((await rt.process(p.pid)).outcome!.message).toContain('storage trigger');
  expect((await rt.audit({ pid: p.pid, action: 'context.compaction_failed' })).map((a) => a.decision)).toEqual(['permission_denied']);
});

it('a prompt projected over the window is never sent: the quantum fails before the model call', async () => {
  rt = await openContextRuntime({ contextManagement: { mode: 'disabled' } });
  const p = await rt.spawn({ goal: 'overflow', image: CTX_AGENT });
  const inner = new ScriptedProvider({ processes: { [p.pid]: touches(3) } });
  const tiny: LlmProfile = { ...PROFILE, name: 'tiny', context_window: 1200 }; // the first prompt alone is larger
  await rt.run({ provider: inner, profile: tiny, maxQuanta: 5 });
  expect(inner.requests).toEqual([]);
  expect(await rt.llmCalls({ pid: p.pid })).toEqual([]);
  expect(await rt.process(p.pid)).toMatchObject({ status: 'killed', outcome: { code: 'resource_limit_exceeded' } });
  expect((await rt.process(p.pid)).outcome!.reason).toContain(
    'over the context window 1200 of profile tiny; nothing was sent to the model',
  );
});
