// The libOS side of the bench: a runtime with the plugins a user loads, processes set up for checked calls, and
// one agent step driven by the scheduler with the ScriptedProvider. Everything goes through the public API of the
// built packages (packages/*/dist).
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { sql } from 'kysely';
import { now } from './measure.mjs';

/** Opens a runtime on `path` with capabilities, object memory and the runtime session (time, exit). */
export function openBenchRuntime(path) {
  return openRuntime({ path, plugins: [capabilities(), objectMemory(), session()] });
}

/** The one capability `get_current_time` checks. */
export const CLOCK_RESOURCE = 'clock:now';

/**
 * Spawns a root process that may call `get_current_time` (read on `clock:now`) and, with `objects`, sees the Object
 * Memory tools. No tool-call budget, so long benches never run out.
 */
export async function spawnChecked(rt, { goal = 'bench', objects = false } = {}) {
  const p = await rt.spawn({ goal, budget: { tool_calls: null } });
  await rt.grant(p.pid, CLOCK_RESOURCE, ['read']);
  if (objects) await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  return p.pid;
}

/** Creates a mutable ledger `{ entries }` named each of `names`, owned by `pid`, host-side (no broker call, untimed). */
export function createLedgers(rt, pid, names, entries) {
  return rt.transaction(async (scope) => {
    const objects = scope.service('objects');
    for (const name of names) await objects.createForProcess(pid, { type: 'plan', name, payload: { entries }, immutable: false });
  });
}

/** Calls `tool` as `pid` and throws when the envelope is not ok (a bench never times a failure). */
export async function callOk(rt, pid, tool, args) {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} as ${pid} failed: ${r.error.code}: ${r.error.message}`);
  return r.payload;
}

/** One agent step: model -> get_current_time -> model -> process_exit (two quanta). */
export const STEP_SCRIPT = {
  processes: {
    '*': [[{ tool: 'get_current_time', args: {} }], [{ tool: 'process_exit', args: { message: 'done' } }]],
  },
};

/** Untimed part of a step: the process it runs and a fresh ScriptedProvider. */
export async function prepareStep(rt) {
  const pid = await spawnChecked(rt, { goal: 'Tell the time, then exit' });
  return { pid, provider: new ScriptedProvider(STEP_SCRIPT) };
}

/**
 * Timed part of a step: the scheduler runs the prepared process until nothing is runnable. Throws unless it ran
 * exactly the scripted two quanta and ended with the process exited. Returns the number of quanta.
 */
export async function runStep(rt, { pid, provider }) {
  const r = await rt.run({ provider });
  const tools = r.results.flatMap((q) => q.executed);
  const failed = r.results.flatMap((q) => q.results.filter((x) => !x.ok).map((x) => x.error.code));
  const others = r.results.filter((q) => q.pid !== pid).map((q) => q.pid);
  if (r.quanta !== 2 || tools.join(',') !== 'get_current_time,process_exit' || failed.length > 0 || others.length > 0) {
    const got = `${r.quanta} quanta [${tools.join(', ')}], failed [${failed.join(', ')}], other pids [${others.join(', ')}]`;
    throw new Error(`step of ${pid}: expected get_current_time then process_exit in 2 quanta, got ${got}`);
  }
  return r.quanta;
}

/**
 * Turns off the runtime connection's WAL auto-checkpoint, so the WAL file only grows and its size counts every
 * byte written since open. Only for the runtime that measures WAL bytes.
 */
export async function keepWal(rt) {
  await rt.transaction((scope) => sql`pragma wal_autocheckpoint = 0`.execute(scope.store));
}

/**
 * A timed block's share of committing its units to the store file: `rt.flush()` (group commit batches units in a
 * redo log and commits them to SQLite later) timed and divided by the block's `n` ops. Every figure that times
 * libOS calls or steps adds it, so no batch commit is left for another side's block or for after the bench.
 */
export function flushShare(rt, n) {
  const t0 = now();
  rt.flush();
  return (now() - t0) / n;
}
