// [CP-17] SIGKILL during a checkpoint restore (a real child Node process on a real SQLite file): after a reopen the
// subtree is wholly as it was before the restore or wholly as the checkpoint holds it, never a mix, and the restore's
// audit record is there exactly when its state is.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { openCheckpointHarness, versions, type CheckpointHarness } from './support/checkpoints-harness.js';

const RUN_TS = fileURLToPath(new URL('./fixtures/run-ts.mjs', import.meta.url));
const PROGRAM = fileURLToPath(new URL('./fixtures/checkpoint-crash-runtime.ts', import.meta.url));
/** Objects in the subtree: enough that a restore takes a while to write. */
const OBJECTS = 150;

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any
let h: CheckpointHarness | undefined;
const dirs: string[] = [];
const kids: ChildProcess[] = [];
afterEach(async () => {
  for (const c of kids.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await h?.rt.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * Runs the fixture on a fresh store up to `ready`, tells it to restore, and SIGKILLs it `delayMs` after it says it is
 * restoring (or, with `delayMs` null, once it says it has restored). Returns the store, the two states and whether the
 * restore had finished (said so) before the kill.
 */
async function run(delayMs: number | null): Promise<{ db: string; ready: Json; finished: boolean; ms: number | null }> {
  const dir = mkdtempSync(join(tmpdir(), 'libos-checkpoint-crash-'));
  dirs.push(dir);
  const db = join(dir, 'libos.db');
  const child = spawn(process.execPath, [RUN_TS, PROGRAM, db, String(OBJECTS)], { stdio: ['pipe', 'pipe', 'pipe'] });
  kids.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ready: Json;
  let finished = false;
  let ms: number | null = null;
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as Json;
      if (msg.event === 'ready') {
        ready = msg;
        child.stdin!.write('go\n');
      } else if (msg.event === 'restoring' && delayMs !== null) {
        setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, delayMs);
      } else if (msg.event === 'restored') {
        finished = true;
        ms = msg.ms;
        if (delayMs === null) {
          child.kill('SIGKILL');
          resolve();
        }
      }
    });
    child.once('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`the fixture ended (${code ?? signal}) before it was killed:\n${stderr}`));
    });
  });
  await exited;
  expect(child.signalCode).toBe('SIGKILL');
  return { db, ready: ready!, finished, ms };
}

/** Reopens the store and says which state it is in: `before` (the changed one), `after` (the checkpoint's). */
async function stateAfterReopen(db: string, ready: Json): Promise<'before' | 'after'> {
  h = await openCheckpointHarness({ path: db, idStart: 1_000_000 });
  const now = await versions(h.rt, ready.pid);
  const restores = (await h.rt.audit({ action: 'checkpoint.restore' })).length;
  await h.rt.close();
  h = undefined;
  if (JSON.stringify(now) === JSON.stringify(ready.at_checkpoint)) {
    expect(restores).toBe(1);
    return 'after';
  }
  // Not the checkpoint's state: then exactly the state before the restore, and no restore recorded.
  expect(now).toEqual(ready.changed);
  expect(restores).toBe(0);
  return 'before';
}

it('[CP-17] SIGKILL before, during or after a restore: on reopen the subtree is wholly before or wholly after it', {
  timeout: 600_000,
}, async () => {
  // A run killed only once the restore said it was done: the checkpoint's state, and how long a restore takes here.
  const done = await run(null);
  expect(done.ready.changed).not.toEqual(done.ready.at_checkpoint);
  expect(await stateAfterReopen(done.db, done.ready)).toBe('after');
  const span = Math.max(5, Math.ceil(done.ms ?? 50));
  // Kills spread over the restore's span (and a little past it).
  const outcomes: { delay: number; finished: boolean; state: string }[] = [];
  for (const fraction of [0, 0.25, 0.5, 0.75, 1.25]) {
    const delay = Math.round(span * fraction);
    const r = await run(delay);
    outcomes.push({ delay, finished: r.finished, state: await stateAfterReopen(r.db, r.ready) });
    // A restore that said it was done before the kill is durable.
    if (r.finished) expect(outcomes.at(-1)!.state).toBe('after');
  }
  console.log(
    `checkpoint crash: restore ${span} ms; kills ${outcomes.map((o) => `${o.delay}ms→${o.state}${o.finished ? '(done)' : ''}`).join(', ')}`,
  );
});
