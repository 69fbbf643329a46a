// SIGKILL during a compaction stage (a real child Node process on a real SQLite file), reopen, run: the compaction
// resumes from its durable saved wait and completes exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, expect, it } from 'vitest';
import { CompressorProvider, contextOf, kinds, openContextRuntime, summaryOf } from './support/context-harness.js';

const RUN_TS = fileURLToPath(new URL('./fixtures/run-ts.mjs', import.meta.url));
const PROGRAM = fileURLToPath(new URL('./fixtures/compaction-crash-runtime.ts', import.meta.url));
/** Ids of the reopened runtime start here, past every id the killed one used. */
const REOPEN_IDS = 1_000_000;

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let rt: Runtime | undefined;
const dirs: string[] = [];
const kids: ChildProcess[] = [];
afterEach(async () => {
  for (const c of kids.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await rt?.close();
  rt = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Runs the fixture in a child Node process, waits for its `ready` line, SIGKILLs it, and returns the line. */
async function killAtReady(mode: 'stage2' | 'mid-child'): Promise<{ db: string; ready: Json }> {
  const dir = mkdtempSync(join(tmpdir(), 'libos-compaction-crash-'));
  dirs.push(dir);
  const db = join(dir, 'libos.db');
  const child = spawn(process.execPath, [RUN_TS, PROGRAM, db, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  kids.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const ready = await new Promise<Json>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as Json;
      if (msg.event === 'ready') resolve(msg);
    });
    child.once('exit', (code, signal) => reject(new Error(`the fixture ended (${code ?? signal}) before it was ready:\n${stderr}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
  expect(child.signalCode).toBe('SIGKILL');
  return { db, ready };
}

const pending = (pid: string) =>
  rt!.transaction((scope) => scope.store.selectFrom('pending_actions').selectAll().where('pid', '=', pid).execute());

it(`SIGKILL while the caller waits on stage 2, reopen, run: stage 2 is rebuilt from the saved wait (stage 1 rolled forward) and the \
compaction completes once`, async () => {
  const { db, ready } = await killAtReady('stage2');
  expect(ready.status).toBe('waiting_event');
  rt = await openContextRuntime({ path: db, idStart: REOPEN_IDS });
  expect(await rt.process(ready.pid)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'child', child_pid: ready.second } });
  expect((await pending(ready.pid)).map((r) => r.status)).toEqual(['pending']);
  expect((await rt.audit({ action: 'context.compaction_stage_rebuilt' })).map((a) => a.details.child_pid)).toEqual([ready.second]);
  const provider = new CompressorProvider(rt, new ScriptedProvider([]));
  const report = await rt.run({ provider, maxQuanta: 2 }); // the compressor's turn, then the caller's resumed call
  // The rebuilt stage 2 rolls forward stage 1's summary, which survived only in the caller's durable saved wait.
  expect(provider.stages).toHaveLength(1);
  expect(provider.stages[0]).toMatchObject({ stage_index: 2, total_stages: 2, previous_summary: summaryOf('stage 1', ['stage 1']) });
  const resumed = report.results.filter((r) => r.pid === ready.pid && r.kind === 'resumed');
  expect(resumed).toHaveLength(1);
  expect(resumed[0]!.results[0]).toMatchObject({
    ok: true,
    payload: { compacted: true, old_version: ready.source_version, compressor_pids: [ready.first, ready.second] },
  });
  expect(await rt.audit({ action: 'context.compacted' })).toHaveLength(1);
  expect(await pending(ready.pid)).toEqual([]);
  const after = await contextOf(rt, ready.pid);
  expect(after.generation).not.toBe(ready.generation);
  expect(kinds(after.payload)[0]).toBe('context_compacted');
  expect(after.payload!.entries[0]).toMatchObject({ source_entry_count: ready.source_entries, summary: summaryOf('stage 2', ['stage 2']) });
});

it(`SIGKILL inside the compressor's model call, reopen: the compressor is paused, never replayed; resumed, it finishes and the compaction \
completes once`, async () => {
  const { db, ready } = await killAtReady('mid-child');
  expect(ready.running).toBe(ready.first);
  rt = await openContextRuntime({ path: db, idStart: REOPEN_IDS });
  expect(await rt.process(ready.first)).toMatchObject({ status: 'paused' });
  expect(await rt.process(ready.pid)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'child', child_pid: ready.first } });
  expect(await rt.audit({ action: 'process.recovered' })).toMatchObject([{ target: `process:${ready.first}`, decision: 'paused' }]);
  const provider = new CompressorProvider(rt, new ScriptedProvider([]));
  expect((await rt.run({ provider })).quanta).toBe(0); // nothing runs while the compressor is paused
  await rt.signal(ready.first, 'resume');
  const report = await rt.run({ provider, maxQuanta: 4 }); // two stages: each compressor's turn, then the caller's
  expect(provider.stages.map((s) => s.stage_index)).toEqual([1, 2]);
  const done = report.results.filter((r) => r.pid === ready.pid && r.kind === 'resumed').at(-1)!;
  expect(done.results[0]).toMatchObject({ ok: true, payload: { compacted: true, old_version: ready.source_version } });
  expect((done.results[0] as Json).payload.compressor_pids).toHaveLength(2);
  expect(await rt.audit({ action: 'context.compacted' })).toHaveLength(1);
  expect(await pending(ready.pid)).toEqual([]);
});
