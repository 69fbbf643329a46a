// The crash suite (issue 8): a child process runs a mixed scripted workload (crash-workload.mjs: memory, children,
// human waits, tasks, approvals, an outside effect) and is SIGKILLed at a seeded random moment, LIBOS_CRASH_KILLS
// times (default 25; a soak sets 500). A store lives for STORE_KILLS kills, so later kills land on a store already
// recovered from earlier ones. After each kill a copy of the store is reopened here (from the sources) and every
// invariant of crash-invariants.ts must hold, before and after the checker lets everything settle. The suite prints
// one line: `crash kills N, violations M (...)`, with the seed (LIBOS_CRASH_SEED replays the same choices).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { afterAll, describe, expect, it } from 'vitest';
import { crashEffects } from './crash-effects.mjs';
import { checkReopened, checkSettled, readJsonLines, settle, type EffectLine, type JournalLine } from './crash-invariants.js';

const WORKLOAD = fileURLToPath(new URL('./crash-workload.mjs', import.meta.url));
const BUILT = ['sdk', 'capabilities', 'object-memory', 'tasks', 'session', 'kernel'].map((p) =>
  fileURLToPath(new URL(`../../../packages/${p}/dist/index.js`, import.meta.url)),
);

function envCount(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 2 ** 31)
    throw new Error(`${name} must be an integer in 1..2^31 (got ${JSON.stringify(text)})`);
  return Number(text);
}
const KILLS = envCount('LIBOS_CRASH_KILLS', 25);
const SEED = envCount('LIBOS_CRASH_SEED', randomInt(1, 2 ** 31));
/** Kills per store: each store is reopened after STORE_KILLS - 1 crashes before a fresh one starts. */
const STORE_KILLS = 4;
/**
 * Where kills land: a fifth within KILL_EARLY_MS of the workload's start (mostly while it opens and recovers the
 * store); a quarter as an effect has acted but its call has not committed (half of them at the first effect of an
 * approved call resuming, half at the first or second effect of any call; at 2 x KILL_STEPS steps if none comes);
 * the rest a random number of workload steps (below KILL_STEPS) after it is ready, then a random part of
 * KILL_JITTER_MS into the next step. Counting steps, not time, keeps the work per kill the same on a loaded machine.
 */
const KILL_EARLY_MS = 400;
const KILL_STEPS = 16;
const KILL_JITTER_MS = 40;

/** mulberry32 (as in the workload): the seed fixes every delay and every workload seed. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Store {
  readonly dir: string;
  readonly db: string;
  readonly journal: string;
  readonly effects: string;
}

/** One workload child: started (modules loaded) ahead of its turn, told to open its store with `go`. */
class Workload {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  readonly loaded: Promise<void>;
  readonly ready: Promise<void>;
  isReady = false;
  steps = 0;
  effects = 0;
  resumedEffects = 0;
  stderr = '';
  readonly #waiters: { readonly event: string; readonly n: number; readonly resolve: () => void }[] = [];

  constructor(store: Store, epoch: number, seed: number) {
    this.child = spawn(process.execPath, [WORKLOAD, store.db, store.journal, store.effects, String(epoch), String(seed)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(this.child);
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.stderr!.on('data', (d) => (this.stderr += String(d)));
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      let msg: { event: string; n?: number };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        this.stderr += `(stdout) ${line}\n`;
        return;
      }
      if (msg.event === 'ready') this.isReady = true;
      if (msg.event === 'step') this.steps = msg.n!;
      if (msg.event === 'effect') this.effects = msg.n!;
      if (msg.event === 'resumed_effect') this.resumedEffects = msg.n!;
      for (const w of this.#waiters) if (w.event === msg.event && (msg.n ?? 0) >= w.n) w.resolve();
    });
    this.loaded = this.#until('loaded');
    this.ready = this.#until('ready');
  }

  /** Resolves when the workload prints `event` (a `step` numbered `n` or more); rejects if it ends first. */
  #until(event: string, n = 0): Promise<void> {
    const reached = new Promise<void>((resolve, reject) => {
      this.#waiters.push({ event, n, resolve });
      void this.exited.then(() =>
        reject(new Error(`the workload ended (${this.child.exitCode ?? this.child.signalCode}) before "${event}":\n${this.stderr}`)),
      );
    });
    reached.catch(() => {}); // the caller races it against `exited`
    return reached;
  }

  go(): void {
    this.child.stdin!.write('go\n');
  }

  /** Resolves once the workload has finished `n` steps after opening its store. */
  step(n: number): Promise<void> {
    return this.steps >= n ? Promise.resolve() : this.#until('step', n);
  }

  /** Resolves once its `n`th effect (of a resuming call, with `resumed`) has acted, its call not yet committed. */
  effect(n: number, resumed: boolean): Promise<void> {
    if ((resumed ? this.resumedEffects : this.effects) >= n) return Promise.resolve();
    return this.#until(resumed ? 'resumed_effect' : 'effect', n);
  }
}

const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'libos-crash-'));
  dirs.push(dir);
  return { dir, db: join(dir, 'libos.db'), journal: join(dir, 'journal.jsonl'), effects: join(dir, 'effects.jsonl') };
}

/** What a kill left: a copy of the store files (database and write-ahead log) and the journal and effect lines. */
interface Remains {
  readonly dir: string;
  readonly db: string;
  readonly journal: JournalLine[];
  readonly effects: EffectLine[];
}

function takeRemains(store: Store): Remains {
  const dir = mkdtempSync(join(tmpdir(), 'libos-crash-check-'));
  dirs.push(dir);
  // The store is its file, its WAL and its redo log (group commit): a copy without the log would lose acknowledged units.
  for (const suffix of ['', '-wal', '-journal', '-redo'])
    if (existsSync(store.db + suffix)) copyFileSync(store.db + suffix, join(dir, `libos.db${suffix}`));
  return {
    dir,
    db: join(dir, 'libos.db'),
    journal: readJsonLines<JournalLine>(store.journal),
    effects: readJsonLines<EffectLine>(store.effects),
  };
}

interface Checked {
  readonly violations: string[];
  /** Processes found running at this reopen (cut off mid-quantum) and saved calls found resuming, counted on the whole store. */
  readonly recovered: number;
  readonly interrupted: number;
}

/** Reopens the copy here (from the sources), checks it, lets it settle, checks again; the copy is then deleted. */
async function check(remains: Remains): Promise<Checked> {
  const checkerEffects = join(remains.dir, 'checker-effects.jsonl');
  let rt: Runtime | null = null;
  try {
    rt = await openRuntime({
      path: remains.db,
      plugins: [capabilities(), objectMemory(), tasks(), session(), crashEffects({ log: checkerEffects })],
    });
    const violations = await checkReopened(rt, remains.journal, remains.effects);
    const recovered = (await rt.audit({ action: 'process.recovered', limit: 100_000 })).length;
    const interrupted = (await rt.audit({ action: 'llm.pending_action_resume_interrupted', limit: 100_000 })).length;
    violations.push(...(await settle(rt)));
    violations.push(...(await checkSettled(rt, remains.journal, [...remains.effects, ...readJsonLines<EffectLine>(checkerEffects)])));
    return { violations, recovered, interrupted };
  } finally {
    await rt?.close();
    rmSync(remains.dir, { recursive: true, force: true });
  }
}

/** What the runs did, for the figure (and to prove the workload reached every path it is there for). */
interface Stats {
  calls: number;
  appends: number;
  children: number;
  answers: number;
  approvals: number;
  tasks: number;
  effects: number;
  /** Processes found running at a reopen, and saved calls found resuming (each failed closed). */
  recovered: number;
  interrupted: number;
  atEffect: number;
  duringOpen: number;
}

/** Adds what the workload did in one store (its journal and effect lines) to the figure's counts. */
function tally(stats: Stats, r: Remains): void {
  const results = r.journal.filter((l) => l.k === 'result');
  const ok = (tool: string) => results.filter((l) => l.tool === tool && l.ok && !l.wait).length;
  stats.calls += results.length;
  stats.appends += ok('append_memory_object');
  stats.children += ok('spawn_child_process');
  stats.answers += r.journal.filter((l) => l.k === 'answer').length;
  stats.approvals += results.filter((l) => l.tool === 'crash_effect' && l.wait).length;
  stats.tasks += ok('start_object_task');
  stats.effects += r.effects.length;
}

function figure(s: Stats, violations: number): string {
  return (
    `crash kills ${KILLS}, violations ${violations} (seed ${SEED}; ${Math.ceil(KILLS / STORE_KILLS)} stores; ` +
    `${s.calls} calls, ${s.appends} appends, ${s.children} children, ${s.answers} answers, ${s.approvals} approvals, ` +
    `${s.tasks} tasks, ${s.effects} effects; ${s.recovered} killed mid-quantum, ${s.interrupted} mid-resume, ` +
    `${s.atEffect} at an effect, ${s.duringOpen} during open)`
  );
}

type KillMode = 'early' | 'step' | 'effect' | 'resumed effect';
interface KillPlan {
  readonly mode: KillMode;
  /** Steps to wait for (`step`), or which effect to wait for (the effect modes). */
  readonly n: number;
  /** Milliseconds after that (after `go` for `early`). */
  readonly delay: number;
}

/** Draws where the next kill lands (see KILL_EARLY_MS). */
function planKill(rng: () => number): KillPlan {
  const aim = rng();
  if (aim < 0.2) return { mode: 'early', n: 0, delay: Math.floor(rng() * KILL_EARLY_MS) };
  if (aim < 0.325) return { mode: 'resumed effect', n: 1, delay: 0 };
  if (aim < 0.45) return { mode: 'effect', n: 1 + Math.floor(rng() * 2), delay: 0 };
  return { mode: 'step', n: Math.floor(rng() * KILL_STEPS), delay: Math.floor(rng() * KILL_JITTER_MS) };
}

/** Waits for the planned moment, then SIGKILLs the workload; says where the kill landed. */
async function killAsPlanned(w: Workload, plan: KillPlan, stats: Stats): Promise<string> {
  if (plan.mode !== 'early') {
    const reached =
      plan.mode === 'step'
        ? () => w.step(plan.n)
        : () => Promise.race([w.effect(plan.n, plan.mode === 'resumed effect'), w.step(2 * KILL_STEPS)]);
    await Promise.race([w.ready.then(reached).catch(() => {}), w.exited]);
  }
  await Promise.race([sleep(plan.delay), w.exited]);
  if (w.child.exitCode !== null || w.child.signalCode !== null) {
    throw new Error(`the workload ended (${w.child.exitCode ?? w.child.signalCode}) before its kill:\n${w.stderr}`);
  }
  const atEffect = plan.mode !== 'step' && plan.mode !== 'early' && (plan.mode === 'effect' ? w.effects : w.resumedEffects) >= plan.n;
  if (!w.isReady) stats.duringOpen++;
  if (atEffect) stats.atEffect++;
  w.child.kill('SIGKILL');
  await w.exited;
  expect(w.child.signalCode).toBe('SIGKILL');
  if (plan.mode === 'early') return `${plan.delay} ms after start`;
  if (plan.mode === 'step') return `step ${plan.n} + ${plan.delay} ms`;
  return atEffect ? `${plan.mode} ${plan.n}, step ${w.steps}` : `no ${plan.mode} by step ${w.steps}`;
}

describe('crash suite', () => {
  it(`SIGKILL at random points (${KILLS} kills): after each, the reopened store keeps every invariant`, {
    timeout: 120_000 + KILLS * 8_000,
  }, async () => {
    for (const file of BUILT)
      if (!existsSync(file)) throw new Error(`${file} is missing: the crash workload runs the built packages (npm run build)`);
    const rng = generator(SEED);
    const violations: string[] = [];
    const stats: Stats = {
      calls: 0,
      appends: 0,
      children: 0,
      answers: 0,
      approvals: 0,
      tasks: 0,
      effects: 0,
      recovered: 0,
      interrupted: 0,
      atEffect: 0,
      duringOpen: 0,
    };
    const seen = { recovered: 0, interrupted: 0 };
    let store = newStore();
    let w = new Workload(store, 0, Math.floor(rng() * 2 ** 31));
    // The check of one kill runs while the next workload works (never two checks at once).
    let checking: Promise<void> = Promise.resolve();
    let checkError: unknown = null;
    for (let kill = 0; kill < KILLS; kill++) {
      const epoch = kill % STORE_KILLS;
      const plan = planKill(rng);
      const nextStore = epoch === STORE_KILLS - 1 ? newStore() : store;
      await w.loaded;
      w.go();
      // The next kill's workload loads its modules while this one works; it touches its store only on `go`.
      const next = kill + 1 < KILLS ? new Workload(nextStore, (kill + 1) % STORE_KILLS, Math.floor(rng() * 2 ** 31)) : null;
      const at = await killAsPlanned(w, plan, stats).catch((err: Error) => {
        throw new Error(`kill ${kill}: ${err.message}`);
      });
      const remains = takeRemains(store);
      const lastOfStore = nextStore !== store || kill === KILLS - 1;
      if (lastOfStore) {
        tally(stats, remains);
        rmSync(store.dir, { recursive: true, force: true }); // no workload opens it again; its copy is in `remains`
      }
      await checking;
      if (checkError) throw checkError;
      const label = `kill ${kill} (store ${Math.floor(kill / STORE_KILLS)} epoch ${epoch}, ${at})`;
      checking = check(remains).then(
        (c) => {
          violations.push(...[...new Set(c.violations)].map((v) => `${label}: ${v}`));
          stats.recovered += c.recovered - seen.recovered;
          stats.interrupted += c.interrupted - seen.interrupted;
          Object.assign(seen, lastOfStore ? { recovered: 0, interrupted: 0 } : { recovered: c.recovered, interrupted: c.interrupted });
        },
        (err: unknown) => void (checkError = err),
      );
      store = nextStore;
      if (next) w = next;
    }
    await checking;
    if (checkError) throw checkError;
    console.log(figure(stats, violations.length));
    expect(violations.slice(0, 20)).toEqual([]);
    // The workload did what it is for: a run that never reached these paths would check nothing.
    if (KILLS >= 25) {
      for (const what of ['calls', 'appends', 'children', 'answers', 'approvals', 'tasks', 'effects', 'recovered'] as const) {
        expect.soft(stats[what], `${what} in ${KILLS} kills`).toBeGreaterThan(0);
      }
    }
  });
});
