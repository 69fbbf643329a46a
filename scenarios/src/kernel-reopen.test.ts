// Reopen rules on a real SQLite file (docs/behaviour/kernel.md): waits survive a close and a SIGKILL, nothing
// half-committed is visible, a process found `running` becomes `paused`, a `resuming` saved call fails closed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { crashPlugin, HOLD_TOOL, UNCOMMITTED_EVENT } from './fixtures/crash-plugin.js';
import { equip, openKernel, spawnChild, supervisor, type Json } from './support/kernel-harness.js';

const RUN_TS = fileURLToPath(new URL('./fixtures/run-ts.mjs', import.meta.url));
const CRASH_RUNTIME = fileURLToPath(new URL('./fixtures/crash-runtime.ts', import.meta.url));
/** Ids of a reopened runtime start here, past every id the first one used. */
const REOPEN_IDS = 1_000_000;

const runtimes: Runtime[] = [];
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const rt of runtimes.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const d = mkdtempSync(join(tmpdir(), 'libos-reopen-'));
  dirs.push(d);
  return join(d, 'libos.db');
}
async function open(path: string, idStart = 0): Promise<Runtime> {
  const rt = await openKernel(path, idStart, [crashPlugin()]);
  runtimes.push(rt);
  return rt;
}
async function closeAll(): Promise<void> {
  for (const rt of runtimes.splice(0)) await rt.close();
}
// A plugin's table (the crash fixture's): the kernel types only its own tables, so the handle is untyped here.
const rows = (rt: Runtime, table: string) => rt.transaction(async (scope) => (scope.store as Json).selectFrom(table).selectAll().execute());
const pendingActions = (rt: Runtime) =>
  rt.transaction(async (scope) =>
    scope.store
      .selectFrom('pending_actions')
      .select(['pid', 'tool', 'args', 'wait', 'status', 'resume_token', 'call_id'])
      .orderBy('pid')
      .execute(),
  );

interface Snapshot {
  processes: {
    pid: string;
    status: string;
    wait_state: string | null;
    outcome: string | null;
    state_generation: number;
    revision: number;
  }[];
  pending_actions: Record<string, unknown>[];
  human_requests: { id: string; pid: string; status: string }[];
}
interface WaitingLine {
  event: 'waiting';
  pids: { parent: string; child: string; asker: string; listener: string; runner: string };
  snapshot: Snapshot;
}

/**
 * Runs fixtures/crash-runtime.ts in a child Node process on a fresh SQLite file, waits for its `holding` line (a
 * quantum is hanging inside an open transaction), SIGKILLs it and returns its `waiting` report.
 */
async function crashWhileHolding(mode: 'model' | 'resume'): Promise<{ db: string; waiting: WaitingLine }> {
  const db = tempDb();
  const child = spawn(process.execPath, [RUN_TS, CRASH_RUNTIME, db, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const lines: Record<string, unknown>[] = [];
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as Record<string, unknown>;
      lines.push(msg);
      if (msg.event === 'holding') resolve();
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`crash-runtime ended (${code ?? signal}) before holding a transaction open:\n${stderr}`)),
    );
  });
  child.kill('SIGKILL');
  await exited;
  expect(child.signalCode).toBe('SIGKILL');
  const waiting = lines.find((l) => l.event === 'waiting') as unknown as WaitingLine;
  expect(waiting).toBeDefined();
  return { db, waiting };
}

/** Every process but the runner is exactly as committed before the crash; so are the saved calls and the human queue. */
async function expectWaitsIntact(rt: Runtime, w: WaitingLine): Promise<void> {
  const after = await rt.transaction(async (scope) =>
    scope.store
      .selectFrom('processes')
      .select(['pid', 'status', 'wait_state', 'outcome', 'state_generation', 'revision'])
      .orderBy('pid')
      .execute(),
  );
  const others = (list: { pid: string }[]) => list.filter((p) => p.pid !== w.pids.runner);
  expect(others(after as never)).toEqual(others(w.snapshot.processes));
  const statuses = Object.fromEntries(after.map((p) => [p.pid, p.status]));
  expect(statuses[w.pids.parent]).toBe('waiting_event');
  expect(statuses[w.pids.child]).toBe('waiting_event');
  expect(statuses[w.pids.asker]).toBe('waiting_human');
  expect(statuses[w.pids.listener]).toBe('waiting_event');
  expect(after.filter((p) => p.status === 'running')).toEqual([]);
  expect(others((await pendingActions(rt)) as never)).toEqual(others(w.snapshot.pending_actions as never));
  expect(
    others((await pendingActions(rt)) as never)
      .map((a) => (a as { pid: string }).pid)
      .sort(),
  ).toEqual([w.pids.parent, w.pids.child, w.pids.asker, w.pids.listener].sort());
  expect((await rt.humanRequests()).map((h) => ({ id: h.id, pid: h.pid, status: h.status }))).toEqual(w.snapshot.human_requests);
}

/** What the hanging call wrote inside its open transaction is nowhere: not its mark, its event, its audit or its charge. */
async function expectNothingHalfCommitted(rt: Runtime, runner: string): Promise<void> {
  expect(await rows(rt, 'crash_fixture_marks')).toEqual([]);
  expect(await rt.events({ type: UNCOMMITTED_EVENT })).toEqual([]);
  expect(
    (await rt.audit({ pid: runner, action: 'tool.call', limit: 1000 })).filter(
      (a) => a.target === `tool:${HOLD_TOOL}` && a.decision !== 'waiting',
    ),
  ).toEqual([]);
  expect((await rt.events({ pid: runner, limit: 10_000 })).filter((e) => e.type === 'tool_resumed' || e.type === 'tool_completed')).toEqual(
    [],
  );
}

/** After reopen the waits still work: settle each, and every saved call resumes once without a model call. */
async function expectWaitsResume(rt: Runtime, w: WaitingLine): Promise<void> {
  const [question] = await rt.humanRequests({ status: 'pending' });
  await rt.answerHuman(question!.id, { approved: true, answer: 'blue' });
  await rt.sendMessage(w.pids.listener, { hello: 1 }, { channel: 'inbox' });
  await rt.sendMessage(w.pids.child, { finally: true }, { channel: 'never' });
  const provider = new ScriptedProvider([]); // every model turn is process_exit
  const report = await rt.run({ provider });
  expect(report.idle).toBe(true);
  const resumed = report.results.filter((r) => r.kind === 'resumed');
  expect(resumed.map((r) => r.pid).sort()).toEqual([w.pids.parent, w.pids.child, w.pids.asker, w.pids.listener].sort());
  expect(resumed.every((r) => r.results[0]!.ok)).toBe(true);
  expect(resumed.find((r) => r.pid === w.pids.asker)!.results[0]).toMatchObject({ payload: { answer: 'blue' } });
  expect(resumed.find((r) => r.pid === w.pids.parent)!.results[0]).toMatchObject({
    payload: { child_pid: w.pids.child, ready: true, status: 'exited' },
  });
  expect(provider.calls).toBe(4);
  for (const pid of [w.pids.parent, w.pids.child, w.pids.asker, w.pids.listener]) expect((await rt.process(pid)).status).toBe('exited');
}

describe('reopen', () => {
  it(`[K-25] a \`resuming\` saved call found at reopen fails its process with llm.pending_action_resume_interrupted; a stale \`running\` \
one becomes \`paused\`; neither runs`, async () => {
    const db = tempDb();
    const first = await open(db);
    const interrupted = await supervisor(first, 'resume was in flight');
    await first.call(interrupted.pid, 'receive_process_messages', { block: true, channel: 'x' });
    await first.sendMessage(interrupted.pid, { n: 1 }, { channel: 'x' });
    const stale = await supervisor(first, 'quantum was in flight');
    // The state a crash leaves mid-quantum: the claim (running) and the saved-call claim (resuming) committed.
    await first.transaction(async (scope) => {
      await scope.store.updateTable('processes').set({ status: 'running' }).where('pid', 'in', [interrupted.pid, stale.pid]).execute();
      await scope.store.updateTable('pending_actions').set({ status: 'resuming' }).where('pid', '=', interrupted.pid).execute();
    });
    await closeAll();

    const rt = await open(db, REOPEN_IDS);
    expect(await rt.process(interrupted.pid)).toMatchObject({
      status: 'failed',
      outcome: { kind: 'failed', code: 'pending_action_resume_interrupted' },
    });
    expect(await rt.audit({ action: 'llm.pending_action_resume_interrupted' })).toMatchObject([
      { target: `process:${interrupted.pid}`, details: { tool: 'receive_process_messages' } },
    ]);
    expect(await rt.process(stale.pid)).toMatchObject({ status: 'paused', waitState: { kind: 'paused' } });
    expect(await rt.audit({ action: 'process.recovered' })).toMatchObject([{ target: `process:${stale.pid}`, decision: 'paused' }]);
    expect(await pendingActions(rt)).toEqual([]);
    const provider = new ScriptedProvider([]);
    expect(await rt.run({ provider })).toMatchObject({ quanta: 0, idle: true });
    expect(provider.calls).toBe(0);
    // The message the interrupted call was taking is still unread: it was never replayed.
    expect((await rt.messages(interrupted.pid)).map((m) => m.status)).toEqual(['unread']);
  });

  it(`a clean close keeps every wait and its saved call; after reopen the child exit wakes the parent, which resumes without a model \
call`, async () => {
    const db = tempDb();
    const first = await open(db);
    const parent = await supervisor(first);
    const childPid = await spawnChild(first, parent.pid);
    await equip(first, childPid);
    await first.call(parent.pid, 'wait_child_process', { child_pid: childPid });
    await first.call(childPid, 'ask_human', { question: 'Go?' });
    const before = { parent: await first.process(parent.pid), child: await first.process(childPid), pending: await pendingActions(first) };
    await closeAll();

    const rt = await open(db, REOPEN_IDS);
    expect(await rt.process(parent.pid)).toEqual(before.parent);
    expect(await rt.process(childPid)).toEqual(before.child);
    expect(await pendingActions(rt)).toEqual(before.pending);
    const [q] = await rt.humanRequests({ status: 'pending' });
    await rt.answerHuman(q!.id, { approved: true, answer: 'go' });
    const provider = new ScriptedProvider([]);
    const report = await rt.run({ provider });
    expect(report.results.map((r) => `${r.pid === parent.pid ? 'parent' : 'child'}:${r.kind}`)).toEqual([
      'child:resumed',
      'child:turn',
      'parent:resumed',
      'parent:turn',
    ]);
    expect(provider.calls).toBe(2);
    expect((await rt.processes()).map((p) => p.status)).toEqual(['exited', 'exited']);
  });

  it(`SIGKILL while processes wait and one quantum holds a transaction open: waits intact, nothing half-committed, the running process is \
paused`, async () => {
    const { db, waiting } = await crashWhileHolding('model');
    const rt = await open(db, REOPEN_IDS);
    await expectWaitsIntact(rt, waiting);
    await expectNothingHalfCommitted(rt, waiting.pids.runner);
    const runnerBefore = waiting.snapshot.processes.find((p) => p.pid === waiting.pids.runner)!;
    expect(runnerBefore.status).toBe('runnable');
    // runnable -(claim)-> running -(reopen)-> paused: two transitions, the call's own never committed.
    expect(await rt.process(waiting.pids.runner)).toMatchObject({
      status: 'paused',
      waitState: { kind: 'paused' },
      stateGeneration: runnerBefore.state_generation + 2,
    });
    expect(await rt.audit({ action: 'process.recovered' })).toMatchObject([
      { target: `process:${waiting.pids.runner}`, decision: 'paused' },
    ]);
    expect((await pendingActions(rt)).some((a) => a.pid === waiting.pids.runner)).toBe(false);
    expect((await rt.budget(waiting.pids.runner)).usage.tool_calls ?? 0).toBe(0);
    expect(await rt.llmCalls({ pid: waiting.pids.runner })).toHaveLength(1); // its model turn committed before dispatch
    await expectWaitsResume(rt, waiting);
    expect((await rt.process(waiting.pids.runner)).status).toBe('paused'); // never replayed: it waits for an explicit resume
  }, 60_000);

  it(`[K-25] SIGKILL while a resumed saved call holds a transaction open: that process fails closed, the other waits are \
intact`, async () => {
    const { db, waiting } = await crashWhileHolding('resume');
    const rt = await open(db, REOPEN_IDS);
    await expectWaitsIntact(rt, waiting);
    await expectNothingHalfCommitted(rt, waiting.pids.runner);
    expect(waiting.snapshot.pending_actions.find((a) => a.pid === waiting.pids.runner)).toMatchObject({
      tool: HOLD_TOOL,
      status: 'pending',
    });
    expect(await rt.process(waiting.pids.runner)).toMatchObject({
      status: 'failed',
      outcome: { kind: 'failed', code: 'pending_action_resume_interrupted' },
    });
    expect(await rt.audit({ action: 'llm.pending_action_resume_interrupted' })).toMatchObject([
      { target: `process:${waiting.pids.runner}`, details: { tool: HOLD_TOOL } },
    ]);
    expect((await pendingActions(rt)).some((a) => a.pid === waiting.pids.runner)).toBe(false);
    await expectWaitsResume(rt, waiting);
  }, 60_000);
});
