// Long file: one scenario's stories over one shared harness; split, each file would repeat the setup.
import { DEFAULT_SINK_RULES } from '@libos/capabilities';
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { createPayloadStore, type PayloadStore } from '@libos/object-memory';
import { SERVICE_NAMES, type LlmContextService, type ObjectsService } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BARE_AGENT,
  CompressorProvider,
  contextOf,
  contextText,
  CTX_AGENT,
  jobOf,
  kinds,
  openContextRuntime,
  stageGoalOf,
  summaryOf,
  type ContextSnapshot,
} from './support/context-harness.js';

let rt: Runtime;
afterEach(async () => rt?.close());

const COMPRESSOR = 'context-compressor:v0';
type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A runtime and a CTX_AGENT process that has run `quanta` note_touch turns (so its context Object exists). */
async function agent(opts: { quanta?: number; size?: number; grants?: boolean; budget?: Record<string, number> } = {}) {
  rt = await openContextRuntime();
  const p = await rt.spawn({ goal: 'keep notes', image: CTX_AGENT, ...(opts.budget ? { budget: opts.budget } : {}) });
  if (opts.grants !== false) {
    await rt.grant(p.pid, 'process:spawn', ['write']);
    await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
  }
  const n = opts.quanta ?? 2;
  if (n > 0) {
    const turns = Array.from({ length: n }, (_, i) => [{ tool: 'note_touch', args: { label: `n${i}`, size: opts.size ?? 0 } }]);
    await rt.run({ provider: new ScriptedProvider({ processes: { [p.pid]: turns } }), maxQuanta: n });
  }
  return p.pid;
}

const children = async (pid: string) => (await rt.processes()).filter((p) => p.parentPid === pid);
const compressors = (provider?: ScriptedProvider) => new CompressorProvider(rt, provider ?? new ScriptedProvider([]));

/**
 * Compacts by a host call, then runs each stage (its compressor's quantum, then the caller's resumed call) and stops
 * there, before the caller's next model turn would append to its context.
 */
async function compactAndRun(pid: string, args: Record<string, unknown>, provider: CompressorProvider = compressors(), stages = 1) {
  const first = await rt.call(pid, 'compact_process_context', args);
  const report = await rt.run({ provider, maxQuanta: 2 * stages });
  const resumed = report.results.filter((r) => r.pid === pid && r.kind === 'resumed');
  return { first, last: resumed.length ? resumed[resumed.length - 1]!.results[0]! : first, report, provider };
}

const unchanged = (before: ContextSnapshot, after: ContextSnapshot) => {
  expect(after.version).toBe(before.version);
  expect(after.generation).toBe(before.generation);
  expect(after.payload).toEqual(before.payload);
};

async function setContextEntries(pid: string, entries: Record<string, unknown>[]) {
  await rt.transaction(async (scope) => {
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    const name = scope.service<LlmContextService>(SERVICE_NAMES.llmContext).objectName(pid);
    const ref = (await objects.lookup(`process:${pid}`, name))!;
    const payload = (await objects.readPayload(ref.oid)) as Json;
    await objects.replacePayload(ref.oid, { ...payload, entries }, { expectedVersion: ref.version });
  });
}

describe('compact_process_context: the no-op and its refusals', () => {
  it('[S-X3] [K-45] small context, force=false, context rights only: context_under_target, equal versions, no child, no job', async () => {
    const pid = await agent({ grants: false });
    const ns = (await rt.capabilities(pid)).find((c) => c.resource === `object_namespace:process:${pid}`)!;
    await rt.revoke(ns.id); // not even namespace write is needed for the no-op
    const before = await contextOf(rt, pid);
    const r = await rt.call(pid, 'compact_process_context', {});
    expect(r).toMatchObject({
      ok: true,
      payload: {
        compacted: false,
        reason: 'context_under_target',
        context_oid: before.oid,
        old_version: before.version,
        new_version: before.version,
        compressor_pids: [],
        preserved_recent_entries: 0,
      },
    });
    expect((r as Json).payload.compacted_tokens).toBe((r as Json).payload.source_tokens);
    expect(await children(pid)).toEqual([]);
    expect(await jobOf(rt, pid)).toBeNull();
    unchanged(before, await contextOf(rt, pid));
  });

  it('[S-X4] no context Object: an error, nothing created, even with force', async () => {
    rt = await openContextRuntime(); // source_only: a base-agent process has no context Object
    const p = await rt.spawn({ goal: 'no context' });
    await rt.grant(p.pid, 'process:spawn', ['write']);
    await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
    for (const force of [false, true]) {
      const r = await rt.call(p.pid, 'compact_process_context', { force });
      expect(r).toMatchObject({ ok: false, error: { code: 'object_not_found' } });
      expect((r as Json).error.message).toContain('LLM context object:');
    }
    expect(await children(p.pid)).toEqual([]);
    expect(await jobOf(rt, p.pid)).toBeNull();
    expect((await contextOf(rt, p.pid)).oid).toBeNull();
  });

  it('[S-X17] target 255/64001, preserve 129, chunks 0/65: invalid arguments, nothing runs', async () => {
    const pid = await agent();
    for (const bad of [
      { target_tokens: 255 },
      { target_tokens: 64_001 },
      { preserve_recent_entries: 129 },
      { max_chunks: 0 },
      { max_chunks: 65 },
    ]) {
      const r = await rt.call(pid, 'compact_process_context', { force: true, ...bad });
      expect(r).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
      expect((r as Json).error.message).toContain(Object.keys(bad)[0]);
    }
    expect(await children(pid)).toEqual([]);
    expect(await jobOf(rt, pid)).toBeNull();
  });

  it('[S-X25] the model schema shows the defaults 4000/8/8/false and no _resume_job; {} on a small context is the no-op', async () => {
    const pid = await agent();
    const schema = (await rt.toolSchemas(pid)).find((t) => t.name === 'compact_process_context')!.inputSchema as Json;
    expect(schema.properties.target_tokens).toMatchObject({ default: 4000, minimum: 256, maximum: 64000 });
    expect(schema.properties.preserve_recent_entries).toMatchObject({ default: 8, minimum: 0, maximum: 128 });
    expect(schema.properties.max_chunks).toMatchObject({ default: 8, minimum: 1, maximum: 64 });
    expect(schema.properties.force).toMatchObject({ default: false });
    expect(Object.keys(schema.properties)).not.toContain('_resume_job');
    expect(await rt.call(pid, 'compact_process_context', {})).toMatchObject({
      ok: true,
      payload: { compacted: false, reason: 'context_under_target' },
    });
  });

  it('[S-X28] context rights read+materialize only: an error, forced or not; no job, child or write', async () => {
    const pid = await agent();
    const before = await contextOf(rt, pid);
    await rt.revoke(`cap_own:object:${before.oid}`);
    await rt.grant(pid, `object:${before.oid}`, ['read', 'materialize']);
    for (const force of [false, true]) {
      const r = await rt.call(pid, 'compact_process_context', { force });
      expect(r).toMatchObject({ ok: false, error: { code: 'object_denied' } });
      expect((r as Json).error.message).toContain('write');
    }
    expect(await children(pid)).toEqual([]);
    expect(await jobOf(rt, pid)).toBeNull();
    unchanged(before, await contextOf(rt, pid));
  });

  it('[S-X15] a forged _resume_job is not callable directly; it is absent from the model schema', async () => {
    const pid = await agent();
    const forged = { kind: 'context_compaction_job', caller_pid: pid, current_child_pid: 'pid_x' };
    const r = await rt.call(pid, 'compact_process_context', { _resume_job: forged });
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect((r as Json).error.message).toContain('not callable directly');
    expect(await jobOf(rt, pid)).toBeNull();
    const provider = new ScriptedProvider({ processes: { [pid]: [[{ tool: 'process_exit', args: {} }]] } });
    await rt.run({ provider });
    const tool = provider.requests[0]!.tools.find((t) => t.name === 'compact_process_context')!;
    expect(JSON.stringify(tool.parameters)).not.toContain('_resume_job');
  });
});

describe('compact_process_context: the saved wait is the only resume', () => {
  it('[S-X15] a resumed _resume_job that differs from the job Object is refused; nothing is written', async () => {
    const pid = await agent();
    const before = await contextOf(rt, pid);
    expect(await rt.call(pid, 'compact_process_context', { force: true, max_chunks: 1 })).toMatchObject({
      ok: true,
      wait: { kind: 'child' },
    });
    // Someone rewrites the job Object while the stage runs: the saved call's copy no longer matches it.
    await rt.transaction(async (scope) => {
      const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
      const ref = (await objects.lookup(`process:${pid}`, `context_compaction_job:${pid}`))!;
      const job = (await objects.readPayload(ref.oid)) as Json;
      await objects.replacePayload(ref.oid, { ...job, target_tokens: 999 }, { expectedVersion: ref.version });
    });
    const report = await rt.run({ provider: compressors(), maxQuanta: 2 });
    const resumed = report.results.find((r) => r.pid === pid && r.kind === 'resumed')!;
    expect(resumed.results[0]).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect((resumed.results[0] as Json).error.message).toContain('_resume_job: differs from the job Object');
    unchanged(before, await contextOf(rt, pid));
    expect(await rt.audit({ action: 'context.compacted' })).toEqual([]);
  });
});

describe('compact_process_context: stages and the writeback', () => {
  it(`[S-X5] [K-37] force, one chunk: the caller waits on one context-compressor:v0 child whose table is exactly \
[process_exit]`, async () => {
    const pid = await agent();
    const r = await rt.call(pid, 'compact_process_context', { force: true, max_chunks: 1 });
    expect(r).toMatchObject({ ok: true, wait: { kind: 'child' } });
    expect(await rt.process(pid)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'child' } });
    const [child] = await children(pid);
    expect(child).toMatchObject({ imageId: COMPRESSOR, toolTable: ['process_exit'], visibleTools: ['process_exit'], status: 'runnable' });
    expect((r as Json).wait.child_pid).toBe(child!.pid);
    const stage = await stageGoalOf(rt, child!.pid);
    expect(stage).toMatchObject({
      kind: 'context_compaction_stage',
      caller_pid: pid,
      stage_index: 1,
      total_stages: 1,
      previous_summary: {},
    });
    expect((stage!.entries as unknown[]).length).toBe((await contextOf(rt, pid)).payload!.entries.length);
    expect(await jobOf(rt, pid)).toMatchObject({ status: 'active', current_child_pid: child!.pid, compressor_pids: [child!.pid] });
  });

  it('[S-X6] [K-46] with a valid summary: compacted; one child; entries are context_compacted + the tail; tagged compacted', async () => {
    const pid = await agent({ quanta: 3 });
    const before = await contextOf(rt, pid);
    const { last } = await compactAndRun(pid, { force: true, max_chunks: 1, preserve_recent_entries: 2 });
    expect(last).toMatchObject({
      ok: true,
      payload: {
        compacted: true,
        reason: 'compacted',
        context_oid: before.oid,
        old_version: before.version,
        new_version: before.version! + 1,
        preserved_recent_entries: 2,
      },
    });
    const pids = (last as Json).payload.compressor_pids as string[];
    expect(pids).toHaveLength(1);
    const after = await contextOf(rt, pid);
    expect(kinds(after.payload)[0]).toBe('context_compacted');
    expect(after.payload!.entries[0]).toMatchObject({
      summary: summaryOf('stage 1', ['stage 1']),
      compressor_pids: pids,
      source_version: before.version,
      compaction_method: 'agent_image_child',
    });
    expect(after.payload!.entries.slice(1)).toEqual(before.payload!.entries.slice(-2));
    expect(after.tags).toEqual(expect.arrayContaining(['compacted', 'compaction_method:agent_image_child']));
    expect(after.generation).not.toBe(before.generation);
    expect(await jobOf(rt, pid)).toMatchObject({ status: 'completed' });
    expect(await rt.process(pid)).toMatchObject({ status: 'runnable' });
  });

  it('[S-X13] two chunks: two serial children; stage 2 rolls stage 1 forward; the result is stage 2', async () => {
    const pid = await agent({ quanta: 3 });
    const { last, provider } = await compactAndRun(pid, { force: true, max_chunks: 2 }, compressors(), 2);
    expect(last).toMatchObject({ ok: true, payload: { compacted: true } });
    expect(provider.stages.map((s) => s.stage_index)).toEqual([1, 2]);
    expect(provider.stages[0]!.previous_summary).toEqual({});
    expect(provider.stages[1]!.previous_summary).toEqual(summaryOf('stage 1', ['stage 1']));
    expect((await contextOf(rt, pid)).payload!.entries[0]!.summary).toEqual(summaryOf('stage 2', ['stage 2']));
    const kids = await children(pid);
    expect(kids.map((k) => k.status)).toEqual(['exited', 'exited']);
    expect((last as Json).payload.compressor_pids).toEqual(kids.map((k) => k.pid));
  });

  it('[S-X16] [S-X27] preserve 128 with three entries keeps three; eight chunks over three entries is three stages', async () => {
    const pid = await agent();
    const three = [
      { kind: 'process_started', at: 't0' },
      { kind: 'note', at: 't1', text: 'a' },
      { kind: 'note', at: 't2', text: 'b' },
    ];
    await setContextEntries(pid, three);
    const { last, provider } = await compactAndRun(pid, { force: true, preserve_recent_entries: 128, max_chunks: 8 }, compressors(), 3);
    expect(last).toMatchObject({ ok: true, payload: { compacted: true, preserved_recent_entries: 3 } });
    expect(provider.stages.map((s) => (s.entries as unknown[]).length)).toEqual([1, 1, 1]);
    expect((await contextOf(rt, pid)).payload!.entries.slice(1)).toEqual(three);
  });

  it(`[S-X26] target 256, preserve 2, a large tail: compacted above the target; the tail is the source tail; the stage goal says \
256`, async () => {
    const pid = await agent({ quanta: 3, size: 3000 });
    const before = await contextOf(rt, pid);
    const { last, provider } = await compactAndRun(pid, { target_tokens: 256, preserve_recent_entries: 2, max_chunks: 1 });
    expect(last).toMatchObject({ ok: true, payload: { compacted: true, preserved_recent_entries: 2 } });
    expect((last as Json).payload.compacted_tokens).toBeGreaterThan(256);
    expect((await contextOf(rt, pid)).payload!.entries.slice(1)).toEqual(before.payload!.entries.slice(-2));
    expect(provider.stages[0]!.target_tokens).toBe(256);
  });

  it('[S-X21] after a compaction: a new generation, a stateless next request, the compacted render in the next prompt', async () => {
    const pid = await agent();
    const before = await contextOf(rt, pid);
    await compactAndRun(pid, { force: true, max_chunks: 1 });
    const next = new ScriptedProvider({ processes: { [pid]: [[{ tool: 'note_touch', args: { label: 'after' } }]] } });
    await rt.run({ provider: next, maxQuanta: 1 });
    const after = await contextOf(rt, pid);
    expect(after.generation).not.toBe(before.generation);
    const text = contextText(next.requests[0]!)!;
    expect(text).toMatch(/^LLM context object:\nCache strategy: compacted_stable_prefix\n/);
    expect(text).toContain('"kind":"context_compacted"');
    const [row] = await rt.llmCalls({ pid, limit: 10_000 }).then((rows) => rows.slice(-1));
    expect(JSON.stringify(row!.request)).not.toContain('previous_response_id');
    expect((row!.request as Json).messages).toHaveLength(2); // system + one user message: nothing carried over
  });

  it('[OM-66] an Object read before a compaction reads back with the same version and sha256 after it', async () => {
    rt = await openContextRuntime({ hostConfig: { llm_context: { policy: 'llm_context_object' } } });
    const { pid } = await rt.spawn({ goal: 'read o1, compact, read o1 again' }); // base-agent: it has read_memory_object
    await rt.grant(pid, 'process:spawn', ['write']);
    await rt.grant(pid, `image:${COMPRESSOR}`, ['read']);
    await rt.run({ provider: new ScriptedProvider({ processes: { [pid]: [[{ tool: 'get_current_time', args: {} }]] } }), maxQuanta: 1 });
    const { oid } = await rt.transaction((scope) =>
      scope
        .service<ObjectsService>(SERVICE_NAMES.objects)
        .createForProcess(pid, { type: 'plan', name: 'o1', payload: { steps: ['a', 'b'] } }),
    );
    const read = async () => (await rt.call(pid, 'read_memory_object', { name: 'o1' })) as Json;
    await rt.activateSkill(pid, 'agent-libos-object-memory');
    const r1 = await read();
    expect(r1.ok).toBe(true);
    await compactAndRun(pid, { force: true, max_chunks: 1 });
    const r2 = await read();
    expect(r2.payload).toMatchObject({ oid, version: r1.payload.version, sha256: r1.payload.sha256 });
  });
});

describe('compact_process_context: failures leave the context unchanged', () => {
  it('[S-X7] force without process:spawn: ok=false, the job failed, the context unchanged', async () => {
    const pid = await agent({ grants: false });
    await rt.grant(pid, `image:${COMPRESSOR}`, ['read']);
    const before = await contextOf(rt, pid);
    const r = await rt.call(pid, 'compact_process_context', { force: true });
    expect(r).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect((r as Json).error.message).toContain('process:spawn');
    expect(await jobOf(rt, pid)).toMatchObject({ status: 'failed', error: { code: 'permission_denied' }, compressor_pids: [] });
    expect(await children(pid)).toEqual([]);
    unchanged(before, await contextOf(rt, pid));
  });

  it('[S-X8] force without namespace write: ok=false, no job, no child', async () => {
    const pid = await agent();
    const ns = (await rt.capabilities(pid)).find((c) => c.resource === `object_namespace:process:${pid}`)!;
    await rt.revoke(ns.id);
    const before = await contextOf(rt, pid);
    const r = await rt.call(pid, 'compact_process_context', { force: true });
    expect(r).toMatchObject({ ok: false, error: { code: 'namespace_denied' } });
    expect(await children(pid)).toEqual([]);
    expect(await jobOf(rt, pid)).toBeNull();
    unchanged(before, await contextOf(rt, pid));
  });

  it('[S-X29] without read on image:context-compressor:v0: denied, the job failed, the context unchanged', async () => {
    const pid = await agent({ grants: false });
    await rt.grant(pid, 'process:spawn', ['write']);
    const before = await contextOf(rt, pid);
    const r = await rt.call(pid, 'compact_process_context', { force: true });
    expect(r).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect((r as Json).error.message).toContain(`image:${COMPRESSOR}`);
    expect(await jobOf(rt, pid)).toMatchObject({ status: 'failed' });
    expect(await children(pid)).toEqual([]);
    unchanged(before, await contextOf(rt, pid));
  });

  it('[S-X14] a child budget below the chunks: "exhausted child process budget", the job failed, no child', async () => {
    const pid = await agent({ budget: { child_processes: 1 }, quanta: 3 });
    const before = await contextOf(rt, pid);
    const r = await rt.call(pid, 'compact_process_context', { force: true, max_chunks: 2 });
    expect(r).toMatchObject({ ok: false, error: { code: 'resource_limit_exceeded' } });
    expect((r as Json).error.message).toContain('exhausted child process budget');
    expect(await jobOf(rt, pid)).toMatchObject({ status: 'failed' });
    expect(await children(pid)).toEqual([]);
    unchanged(before, await contextOf(rt, pid));
  });

  it('[S-X9] a summary missing keys, or all empty: rejected; version and payload unchanged', async () => {
    for (const [bad, phrase] of [
      [{ goal: 'only a goal' }, 'missing required fields'],
      [summaryOf(''), 'empty summary'],
    ] as const) {
      const pid = await agent();
      const before = await contextOf(rt, pid);
      const { last } = await compactAndRun(
        pid,
        { force: true, max_chunks: 1 },
        new CompressorProvider(rt, new ScriptedProvider([]), () => bad),
      );
      expect(last).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
      expect((last as Json).error.message).toContain(phrase);
      expect(await jobOf(rt, pid)).toMatchObject({ status: 'failed' });
      unchanged(before, await contextOf(rt, pid));
      expect(await rt.process(pid)).toMatchObject({ status: 'runnable' });
      await rt.close();
    }
  });

  it('[S-X10] the compressor child killed: "ended without a result", the job failed, the context unchanged', async () => {
    const pid = await agent();
    const before = await contextOf(rt, pid);
    await rt.call(pid, 'compact_process_context', { force: true, max_chunks: 1 });
    const [child] = await children(pid);
    await rt.signal(child!.pid, 'terminate');
    const report = await rt.run({ provider: compressors(), maxQuanta: 1 });
    const resumed = report.results.find((r) => r.pid === pid && r.kind === 'resumed')!;
    expect(resumed.results[0]).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect((resumed.results[0] as Json).error.message).toBe(`context compressor child ended without a result: ${child!.pid} status=killed`);
    expect(await jobOf(rt, pid)).toMatchObject({ status: 'failed' });
    unchanged(before, await contextOf(rt, pid));
  });

  it('[S-X11] [K-46] a foreign write while a stage runs: "changed during compaction", the foreign entry kept', async () => {
    const pid = await agent();
    const before = await contextOf(rt, pid);
    await rt.call(pid, 'compact_process_context', { force: true, max_chunks: 1 });
    const q = await rt.spawn({ goal: 'meddle' });
    await rt.activateSkill(q.pid, 'agent-libos-object-memory');
    await rt.grant(q.pid, `object_namespace:process:${pid}`, ['read']);
    await rt.grant(q.pid, `object:${before.oid}`, ['read', 'write']);
    const foreign = { kind: 'foreign_note', at: 'now', text: 'written by another process' };
    const w = await rt.call(q.pid, 'append_memory_object', { namespace: `process:${pid}`, name: `llm_context:${pid}`, entry: foreign });
    expect(w.ok).toBe(true);
    await rt.signal(q.pid, 'pause'); // only the compressor and the caller run below
    const report = await rt.run({ provider: compressors(), maxQuanta: 2 }); // the compressor, then the caller resumes
    const resumed = report.results.find((r) => r.pid === pid && r.kind === 'resumed')!;
    expect(resumed.results[0]).toMatchObject({ ok: false, error: { code: 'version_conflict' } });
    expect((resumed.results[0] as Json).error.message).toContain('changed during compaction');
    const after = await contextOf(rt, pid);
    expect(after.version).toBe(before.version! + 1);
    expect(after.generation).toBe(before.generation);
    expect(after.payload!.entries.at(-1)).toEqual(foreign);
    expect(kinds(after.payload)).not.toContain('context_compacted');
    expect(await jobOf(rt, pid)).toMatchObject({ status: 'failed' });
  });

  it(`[S-X12] an append between the pre-check and the write: the CAS conflicts, the entry stays, the version is old+1, the generation is \
unchanged`, async () => {
    const pid = await agent();
    const before = await contextOf(rt, pid);
    const outcome = await rt.transaction(async (scope) => {
      const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
      const contexts = scope.service<LlmContextService>(SERVICE_NAMES.llmContext);
      const source = (await objects.readPayload(before.oid!)) as Json;
      // The append lands after the pre-check read version V and before the write...
      await objects.replacePayload(
        before.oid!,
        { ...source, entries: [...source.entries, { kind: 'late', at: 'x' }] },
        { expectedVersion: before.version! },
      );
      try {
        await contexts.writeCompacted({
          pid,
          contextOid: before.oid!,
          sourceVersion: before.version!,
          sourcePayload: source,
          payload: { ...source, entries: [] },
        });
        return 'written';
      } catch (err) {
        return (err as Error).message; // ...so the compare-and-swap on V refuses, and this transaction keeps the append
      }
    });
    expect(outcome).toBe(`LLM context changed during compaction: expected version ${before.version}, found ${before.version! + 1}`);
    const after = await contextOf(rt, pid);
    expect(after.version).toBe(before.version! + 1);
    expect(after.generation).toBe(before.generation);
    expect(after.payload!.entries.at(-1)).toEqual({ kind: 'late', at: 'x' });
  });

  it(`[S-X31] a failure after the write (the job update throws): the write rolls back with it (settlement rolled_back); a new call \
compacts once`, async () => {
    // Object Memory's payload store (injectable) refuses the completed job's write: the call fails after the context's
    // compare-and-swap, in the same transaction.
    let fail = true;
    const payloads = createPayloadStore();
    const completedJob = (p: unknown) =>
      typeof p === 'object' && p !== null && (p as Json).kind === 'context_compaction_job' && (p as Json).status === 'completed';
    const payloadStore: PayloadStore = {
      ...payloads,
      set(oid, payload) {
        if (fail && completedJob(payload)) throw new Error('job store down');
        payloads.set(oid, payload);
      },
    };
    rt = await openContextRuntime({ objectMemory: { payloadStore } });
    const p = await rt.spawn({ goal: 'x', image: CTX_AGENT });
    await rt.grant(p.pid, 'process:spawn', ['write']);
    await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
    await rt.run({
      provider: new ScriptedProvider({ processes: { [p.pid]: [[{ tool: 'note_touch', args: { label: 'a' } }]] } }),
      maxQuanta: 1,
    });
    const before = await contextOf(rt, p.pid);
    const { last } = await compactAndRun(p.pid, { force: true, max_chunks: 1 });
    expect(last).toMatchObject({ ok: false, error: { code: 'internal_error', details: { settlement: 'rolled_back' } } });
    unchanged(before, await contextOf(rt, p.pid));
    expect(await jobOf(rt, p.pid)).toMatchObject({ status: 'failed' });
    fail = false;
    const again = await compactAndRun(p.pid, { force: true, max_chunks: 1 });
    expect(again.last).toMatchObject({
      ok: true,
      payload: { compacted: true, old_version: before.version, new_version: before.version! + 1 },
    });
    expect((await rt.audit({ action: 'context.compacted' })).length).toBe(1);
  });

  it(`[S-X24] an active job at stage 2 and a fresh call with other arguments: the stored arguments go on, no second job; without \
process:spawn it fails closed`, async () => {
    for (const revoke of [false, true]) {
      const pid = await agent({ quanta: 3 });
      const before = await contextOf(rt, pid);
      const source = before.payload!;
      const job = {
        kind: 'context_compaction_job',
        schema_version: 1,
        status: 'active',
        caller_pid: pid,
        context_oid: before.oid,
        source_version: before.version,
        source_payload: source,
        source_tokens: 999,
        target_tokens: 3000,
        preserve_recent_entries: 1,
        max_chunks: 3,
        force: true,
        stage_index: 1,
        total_stages: 3,
        current_child_pid: null,
        compressor_pids: ['pid_earlier'],
        discarded_compressor_pids: [],
        summaries: [summaryOf('stage 1', ['stage 1'])],
        created_at: 'then',
        updated_at: 'then',
      };
      await rt.transaction((scope) =>
        scope.service<ObjectsService>(SERVICE_NAMES.objects).createForProcess(pid, {
          type: 'process_state',
          name: `context_compaction_job:${pid}`,
          payload: job,
          immutable: false,
          attachToView: false,
        }),
      );
      if (revoke) {
        const spawn = (await rt.capabilities(pid)).find((c) => c.resource === 'process:spawn')!;
        await rt.revoke(spawn.id);
      }
      const r = await rt.call(pid, 'compact_process_context', { target_tokens: 500, max_chunks: 1, preserve_recent_entries: 5 });
      if (revoke) {
        expect(r).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
        expect(await jobOf(rt, pid)).toMatchObject({ status: 'failed', stage_index: 1 });
        unchanged(before, await contextOf(rt, pid));
      } else {
        expect(r).toMatchObject({ ok: true, wait: { kind: 'child' } });
        const [child] = await children(pid);
        expect(await stageGoalOf(rt, child!.pid)).toMatchObject({
          stage_index: 2,
          total_stages: 3,
          target_tokens: 3000,
          previous_summary: summaryOf('stage 1', ['stage 1']),
        });
        expect(await jobOf(rt, pid)).toMatchObject({
          status: 'active',
          max_chunks: 3,
          preserve_recent_entries: 1,
          compressor_pids: ['pid_earlier', child!.pid],
        });
        const objects = await rt.transaction((scope) =>
          scope
            .service<ObjectsService & { listObjects(q: object): Promise<{ name: string }[]> }>(SERVICE_NAMES.objects)
            .listObjects({ namespace: `process:${pid}` }),
        );
        expect(objects.filter((o) => o.name.startsWith('context_compaction_job:'))).toHaveLength(1);
      }
      await rt.close();
    }
  });
});

describe('compaction in a batch, the Skill, and labels', () => {
  it('[S-B4] parallel [compact(force), get_current_time]: the turn stops waiting on the child; the clock is never read', async () => {
    const pid = await agent();
    await rt.grant(pid, 'clock:now', ['read']);
    const provider = new ScriptedProvider({
      processes: {
        [pid]: [
          [
            { tool: 'compact_process_context', args: { force: true, max_chunks: 1 } },
            { tool: 'get_current_time', args: {} },
          ],
        ],
      },
    });
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({
      stopReason: 'waiting_child',
      executed: ['compact_process_context'],
      skipped: ['get_current_time'],
    });
    expect(await rt.process(pid)).toMatchObject({ status: 'waiting_event' });
    expect(await rt.audit({ action: 'primitive.clock.now' })).toEqual([]);
    expect((await rt.events({ pid })).filter((e) => e.type === 'EXTERNAL_READ')).toEqual([]);
    const batch = (await rt.audit({ pid, action: 'llm.action_batch' })).at(-1);
    expect(batch!.details).toMatchObject({ executed: ['compact_process_context'], skipped: ['get_current_time'] });
  });

  it('[S-B8] parallel [no-op compact, get_current_time]: the compaction answers, the clock call is skipped_after_exclusive', async () => {
    const pid = await agent();
    await rt.grant(pid, 'clock:now', ['read']);
    const provider = new ScriptedProvider({
      processes: {
        [pid]: [
          [
            { tool: 'compact_process_context', args: {} },
            { tool: 'get_current_time', args: {} },
          ],
        ],
      },
    });
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ executed: ['compact_process_context'], skipped: ['get_current_time'] });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: true, payload: { compacted: false, reason: 'context_under_target' } });
    const batch = (await rt.audit({ pid, action: 'llm.action_batch' })).at(-1);
    expect(batch!.details).toMatchObject({ skipped_reason: 'skipped_after_exclusive' });
  });

  it('[S-B7] activating the runtime-session Skill with no grants shows its four tools (no _resume_job) and grants nothing', async () => {
    rt = await openContextRuntime();
    const p = await rt.spawn({ goal: 'look', image: BARE_AGENT });
    expect((await rt.process(p.pid)).visibleTools).toEqual([]);
    await rt.activateSkill(p.pid, 'agent-libos-runtime-session');
    const schemas = await rt.toolSchemas(p.pid);
    expect(schemas.map((s) => s.name).sort()).toEqual(['compact_process_context', 'get_current_time', 'process_exit', 'sleep']);
    expect(JSON.stringify(schemas)).not.toContain('_resume_job');
    expect(await rt.call(p.pid, 'get_current_time', {})).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(await rt.call(p.pid, 'sleep', { seconds: 1 })).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(await rt.capabilities(p.pid)).toEqual((await rt.capabilities(p.pid)).filter((c) => !c.resource.startsWith('clock:')));
  });

  it('[CAP-55] a process that read a secret Object: its context stays secret through a compaction and later normal input', async () => {
    rt = await openContextRuntime({ hostConfig: { llm_context: { policy: 'llm_context_object' } } });
    await rt.transaction((scope) =>
      // The model here is cleared for secret data (by default an llm sink takes confidential at most).
      rt.authority.setSinkRules(
        scope,
        'host',
        DEFAULT_SINK_RULES.map((r) => (r.pattern === 'llm:*' ? { ...r, maxSensitivity: 'secret' as const } : r)),
      ),
    );
    const { pid } = await rt.spawn({ goal: 'read the vault' });
    await rt.grant(pid, 'process:spawn', ['write']);
    await rt.grant(pid, `image:${COMPRESSOR}`, ['read']);
    await rt.transaction((scope) =>
      scope
        .service<ObjectsService>(SERVICE_NAMES.objects)
        .createForProcess(pid, { type: 'evidence', name: 'vault', payload: { code: 's3cr3t' }, labels: { sensitivity: 'secret' } }),
    );
    await rt.activateSkill(pid, 'agent-libos-object-memory');
    expect(await rt.call(pid, 'read_memory_object', { name: 'vault' })).toMatchObject({ ok: true });
    await rt.run({ provider: new ScriptedProvider({ processes: { [pid]: [[{ tool: 'get_current_time', args: {} }]] } }), maxQuanta: 1 });
    expect((await contextOf(rt, pid)).labels.sensitivity).toBe('secret');
    const { last } = await compactAndRun(pid, { force: true, max_chunks: 1 });
    expect(last, JSON.stringify(last)).toMatchObject({ ok: true, payload: { compacted: true } });
    const compacted = await contextOf(rt, pid);
    expect(compacted.labels.sensitivity).toBe('secret');
    const described = await rt.transaction((scope) => scope.service<ObjectsService>(SERVICE_NAMES.objects).describe(compacted.oid!));
    expect(described!.labels.sensitivity).toBe('secret');
    await rt.sendMessage(pid, { note: 'an ordinary message' });
    await rt.run({ provider: new ScriptedProvider({ processes: { [pid]: [[{ tool: 'get_current_time', args: {} }]] } }), maxQuanta: 1 });
    expect((await contextOf(rt, pid)).labels.sensitivity).toBe('secret');
  });
});
