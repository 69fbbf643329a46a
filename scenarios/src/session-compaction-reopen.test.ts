import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, expect, it } from 'vitest';
import { CompressorProvider, contextOf, CTX_AGENT, kinds, openContextRuntime, stageGoalOf, summaryOf } from './support/context-harness.js';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const COMPRESSOR = 'context-compressor:v0';
let rt: Runtime | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function storePath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'libos-compaction-'));
  dirs.push(dir);
  return join(dir, 'libos.db');
}

/** A CTX_AGENT process on a file store that has run two quanta and then called compact (max_chunks 1): it waits. */
async function waitingCompaction(path: string): Promise<{ pid: string; child: string }> {
  rt = await openContextRuntime({ path });
  const p = await rt.spawn({ goal: 'compact across a reopen', image: CTX_AGENT });
  await rt.grant(p.pid, 'process:spawn', ['write']);
  await rt.grant(p.pid, `image:${COMPRESSOR}`, ['read']);
  const turns = [[{ tool: 'note_touch', args: { label: 'a' } }], [{ tool: 'note_touch', args: { label: 'b' } }]];
  await rt.run({ provider: new ScriptedProvider({ processes: { [p.pid]: turns } }), maxQuanta: 2 });
  const r = await rt.call(p.pid, 'compact_process_context', { force: true, max_chunks: 1, preserve_recent_entries: 1 });
  expect(r).toMatchObject({ ok: true, wait: { kind: 'child' } });
  return { pid: p.pid, child: (r as Json).wait.child_pid };
}

const pendingRows = (pid: string) =>
  rt!.transaction((scope) => scope.store.selectFrom('pending_actions').selectAll().where('pid', '=', pid).execute());

it(`[S-X18] a reopen while a stage waits: the lost stage goal is rebuilt, the child exits, the compaction completes and its saved call is \
done`, async () => {
  const path = storePath();
  const { pid, child } = await waitingCompaction(path);
  const before = await contextOf(rt!, pid);
  await rt!.close();
  rt = await openContextRuntime({ path, idStart: 5000 });
  const [rebuilt] = await rt.audit({ action: 'context.compaction_stage_rebuilt' });
  expect(rebuilt!.details).toMatchObject({ pid, child_pid: child, stage_index: 1, total_stages: 1 });
  expect(await stageGoalOf(rt, child)).toMatchObject({ kind: 'context_compaction_stage', caller_pid: pid, source_version: before.version });
  const provider = new CompressorProvider(rt, new ScriptedProvider([]));
  const report = await rt.run({ provider, maxQuanta: 2 });
  expect(report.results.map((r) => `${r.pid === pid ? 'caller' : 'child'}:${r.kind}`)).toEqual(['child:turn', 'caller:resumed']);
  expect(report.results[1]!.results[0]).toMatchObject({
    ok: true,
    payload: { compacted: true, compressor_pids: [child], old_version: before.version },
  });
  expect(await pendingRows(pid)).toEqual([]);
  const after = await contextOf(rt, pid);
  expect(after.generation).not.toBe(before.generation);
  expect(after.oid).not.toBe(before.oid); // the source's payload was gone: re-created under the same name, then written
  expect(kinds(after.payload)).toEqual(['context_compacted', kinds(before.payload).at(-1)]);
  expect(after.payload!.entries[0]!.summary).toEqual(summaryOf('stage 1', ['stage 1']));
});

it(`[S-X19] a stage result lost with the reopen and no full I/O: the stage runs again in a new child; both pids are kept, the first as \
discarded`, async () => {
  const path = storePath();
  const { pid, child } = await waitingCompaction(path);
  await rt!.run({ provider: new CompressorProvider(rt!, new ScriptedProvider([])), maxQuanta: 1, persistFullIo: false }); // the child exits
  expect(await rt!.process(child)).toMatchObject({ status: 'exited' });
  expect(await rt!.process(pid)).toMatchObject({ status: 'runnable' });
  await rt!.close();
  rt = await openContextRuntime({ path, idStart: 5000 });
  const report = await rt.run({ provider: new CompressorProvider(rt, new ScriptedProvider([])), maxQuanta: 3, persistFullIo: false });
  const last = report.results.at(-1)!;
  expect(last).toMatchObject({ pid, kind: 'resumed' });
  const out = (last.results[0] as Json).payload;
  expect(out).toMatchObject({ compacted: true });
  expect(out.compressor_pids).toHaveLength(2);
  expect(out.compressor_pids[0]).toBe(child);
  const entry = (await contextOf(rt, pid)).payload!.entries[0] as Json;
  expect(entry.compaction_metadata.discarded_compressor_pids).toEqual([child]);
  expect(entry.compressor_pids).toEqual(out.compressor_pids);
  expect(await rt.audit({ action: 'context.compressor_discarded' })).toHaveLength(1);
});

it(`a stage result lost with the reopen but kept by full I/O: the summary is taken from the child's recorded exit call, no \
rerun`, async () => {
  const path = storePath();
  const { pid, child } = await waitingCompaction(path);
  await rt!.run({
    provider: new CompressorProvider(rt!, new ScriptedProvider([]), () => summaryOf('recorded', ['from the llm record'])),
    maxQuanta: 1,
  });
  await rt!.close();
  rt = await openContextRuntime({ path, idStart: 5000 });
  const report = await rt.run({ provider: new ScriptedProvider([]), maxQuanta: 1 });
  expect(report.results[0]!.results[0]).toMatchObject({ ok: true, payload: { compacted: true, compressor_pids: [child] } });
  expect((await contextOf(rt, pid)).payload!.entries[0]!.summary).toEqual(summaryOf('recorded', ['from the llm record']));
});

it('[S-X20] a saved compaction found resuming at reopen: the process fails closed with the audit, and nothing is replayed', async () => {
  const path = storePath();
  const { pid } = await waitingCompaction(path);
  const before = await contextOf(rt!, pid);
  // As if the runtime died after claiming the saved call (pending -> resuming) and before it settled.
  await rt!.transaction((scope) => scope.store.updateTable('pending_actions').set({ status: 'resuming' }).where('pid', '=', pid).execute());
  await rt!.close();
  rt = await openContextRuntime({ path, idStart: 5000 });
  expect(await rt.process(pid)).toMatchObject({ status: 'failed', outcome: { code: 'pending_action_resume_interrupted' } });
  const [audit] = await rt.audit({ action: 'llm.pending_action_resume_interrupted' });
  expect(audit!.details).toMatchObject({ pid, tool: 'compact_process_context' });
  expect(await rt.audit({ action: 'context.compaction_stage_rebuilt' })).toEqual([]);
  const report = await rt.run({ provider: new CompressorProvider(rt, new ScriptedProvider([])) });
  expect(report.results.filter((r) => r.pid === pid)).toEqual([]);
  expect(await rt.audit({ action: 'context.compacted' })).toEqual([]);
  expect((await contextOf(rt, pid)).generation).toBe(before.generation);
});

it(`[S-X30] compact, then reopen: generation, label high-water and audit survive; the payload does not (a new OID with fresh \
entries)`, async () => {
  const path = storePath();
  const { pid } = await waitingCompaction(path);
  await rt!.run({ provider: new CompressorProvider(rt!, new ScriptedProvider([])), maxQuanta: 2 });
  const compacted = await contextOf(rt!, pid);
  expect(kinds(compacted.payload)[0]).toBe('context_compacted');
  await rt!.close();
  rt = await openContextRuntime({ path, idStart: 5000 });
  const lost = await contextOf(rt, pid);
  expect(lost).toMatchObject({ oid: compacted.oid, generation: compacted.generation, labels: compacted.labels, payload: null });
  expect(await rt.audit({ action: 'context.compacted' })).toHaveLength(1);
  await rt.run({
    provider: new ScriptedProvider({ processes: { [pid]: [[{ tool: 'note_touch', args: { label: 'after' } }]] } }),
    maxQuanta: 1,
  });
  const fresh = await contextOf(rt, pid);
  expect(fresh.oid).not.toBe(compacted.oid);
  expect(fresh.generation).toBe(compacted.generation);
  expect(kinds(fresh.payload)[0]).toBe('process_started');
  expect(kinds(fresh.payload)).not.toContain('context_compacted');
});
