import type { TreeOwnership } from '../hosts/shared-host.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { runQuantum, type QuantumOptions, type QuantumResult } from '../executor/run-quantum.js';
import { earliestTaskDeadline, wakeTaskDeadlines } from '../processes/runners.js';
import { earliestTimerDeadline, wakeDueTimers } from '../processes/timers.js';
import { preparedQuery } from '@libos/sdk';
import { executeNow } from '../store/direct-queries.js';
import type { KernelStore } from '../store/kernel-database.js';
import { inTransaction } from '../store/transaction.js';
import { RoundRobin } from './round-robin.js';

/**
 * Waits `ms` on the runtime's clock (a real timer unless the clock brings its own sleep). A real timer can fire a
 * millisecond before the wall clock reaches the deadline, so it waits a little past it.
 */
const idle = (deps: KernelDeps, ms: number, interrupt?: AbortSignal): Promise<void> => {
  if (interrupt?.aborted) return Promise.resolve();
  if (deps.clock.sleep) return deps.clock.sleep(ms);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      interrupt?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.ceil(ms) + TIMER_SLACK_MS);
    interrupt?.addEventListener('abort', done, { once: true });
  });
};

/** How far past a deadline a real timer waits (timers may fire early against the wall clock). */
export const TIMER_SLACK_MS = 5;

/** The longest the scheduler sleeps for a task wait's deadline (wait_object_task's timeout bound). */
export const MAX_TASK_WAIT_MS = 60_000;

export interface RunOptions extends QuantumOptions {
  /** The global number of quanta this run may spend (shared by all processes); omitted = until idle. */
  readonly maxQuanta?: number;
  /** Called after every quantum (progress for long runs). */
  readonly onQuantum?: (r: QuantumResult) => void;
  /**
   * Ends an idle wait early (nothing runnable, the scheduler sleeping until a timer or task deadline): the run then
   * returns `idle`. A host running the scheduler in the background aborts it when new work may have arrived.
   * (`signal` stops the run altogether: no new quantum starts, an idle wait ends, the model call in flight is cancelled.)
   */
  readonly wake?: AbortSignal;
}

export interface RunReport {
  readonly quanta: number;
  /** True when the run ended because nothing was runnable (false: maxQuanta ran out first). */
  readonly idle: boolean;
  readonly results: readonly QuantumResult[];
}

/**
 * The scheduler: drives every runnable process fairly (least recently scheduled first, never two quanta for one
 * pid in a round) until nothing is runnable or `maxQuanta` is spent. Waiting processes are not scheduled; an
 * answer, a message, a child's exit or a task's change makes them runnable again in its own transaction; a task
 * wait's deadline is honoured when nothing else can run.
 */
/** Wakes the due timers, in a transaction only when one is due (most rounds find none: one index probe, no commit). */
async function wakeTimersIfDue(deps: KernelDeps): Promise<void> {
  const earliest = await earliestTimerDeadline(deps.db);
  if (earliest === null || Date.parse(earliest) > deps.clock.now().getTime()) return;
  await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => wakeDueTimers(scope));
}

/** The runnable set in spawn order, compiled once per store (read before every round). */
const RUNNABLE = preparedQuery(0, (db: KernelStore) =>
  db.selectFrom('processes').select(['pid', 'created_at']).where('status', '=', 'runnable').orderBy('created_at').orderBy('pid'),
);

/** What a scheduling round read: the runnable set, and the earliest timer when the same read gave it (a host's). */
interface RoundRead {
  readonly runnable: readonly { pid: string }[];
  readonly earliestTimer: string | null | undefined;
}

export class Scheduler {
  readonly #fairness = new RoundRobin();
  readonly #emptyReplies = new Map<string, number>();
  readonly #stalledTurns = new Map<string, number>();

  constructor(private readonly deps: () => KernelDeps) {}

  async runUntilIdle(opts: RunOptions): Promise<RunReport> {
    const deps = this.deps();
    const results: QuantumResult[] = [];
    for (;;) {
      if (opts.signal?.aborted) return { quanta: results.length, idle: false, results };
      const { runnable: rows, earliestTimer } = deps.trees ? await this.#hostRound(deps, deps.trees) : await this.#runnable(deps);
      if (rows.length === 0) {
        const interrupt = anySignal(opts.signal, opts.wake);
        if ((await this.#sleepUntilTimer(deps, interrupt, earliestTimer)) || (await this.#timeOutTaskWaits(deps, interrupt))) continue;
        return { quanta: results.length, idle: true, results };
      }
      const round = this.#fairness.order(rows.map((r) => r.pid));
      for (const pid of round) {
        if (opts.maxQuanta !== undefined && results.length >= opts.maxQuanta) return { quanta: results.length, idle: false, results };
        if (opts.signal?.aborted) return { quanta: results.length, idle: false, results };
        const r = await runQuantum(deps, pid, { ...opts, emptyReplies: this.#emptyReplies, stalledTurns: this.#stalledTurns });
        this.#fairness.ran(pid);
        if (r.kind === 'skipped') continue;
        results.push(r);
        opts.onQuantum?.(r);
      }
    }
  }

  /** One host on its store: wakes the due timers, then reads the runnable set (the earliest timer is read again later). */
  async #runnable(deps: KernelDeps): Promise<RoundRead> {
    await wakeTimersIfDue(deps);
    return { runnable: (await executeNow(deps.db, RUNNABLE(deps.db, []))).rows, earliestTimer: undefined };
  }

  /**
   * One of many hosts: claims trees with work and reads its runnable set and the earliest timer in one round trip
   * (K-15.27); runs only the trees it holds. When a timer is due, it wakes the due timers and claims and reads again
   * (a woken sleeper's tree may have no lease yet).
   */
  async #hostRound(deps: KernelDeps, trees: TreeOwnership): Promise<RoundRead> {
    const read = await trees.round();
    if (read.earliestTimer === null || Date.parse(read.earliestTimer) > deps.clock.now().getTime()) return read;
    await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => wakeDueTimers(scope));
    return trees.round();
  }

  /**
   * Nothing is runnable but a process sleeps: the scheduler waits for the earliest timer (real time; a fake clock's
   * deadline may already have passed) unless a task deadline comes first, then wakes the timers that are due.
   * `known`: the earliest timer as this round's read gave it (a host's round reads it with its claim), else undefined.
   */
  async #sleepUntilTimer(deps: KernelDeps, interrupt: AbortSignal | undefined, known: string | null | undefined): Promise<boolean> {
    const timer = known === undefined ? await earliestTimerDeadline(deps.db) : known;
    if (timer === null) return false;
    const task = await earliestTaskDeadline(deps.db);
    if (task !== null && Date.parse(task) < Date.parse(timer)) return false;
    const ms = Math.min(MAX_TASK_WAIT_MS, Date.parse(timer) - deps.clock.now().getTime());
    if (ms > 0) await idle(deps, ms, interrupt);
    if (interrupt?.aborted) return false;
    const woken = await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => wakeDueTimers(scope));
    // A clock that did not reach the deadline (an injected one) leaves the sleeper waiting: the run ends idle.
    return woken.length > 0;
  }

  /**
   * Nothing is runnable: a process parked in a task wait with a deadline (`wait_object_task{timeout_s}`) is woken at
   * that deadline (the scheduler sleeps until then, at most MAX_TASK_WAIT_MS), so its call returns the task's
   * current state. Returns whether it woke any.
   */
  async #timeOutTaskWaits(deps: KernelDeps, interrupt: AbortSignal | undefined): Promise<boolean> {
    const deadline = await earliestTaskDeadline(deps.db);
    if (deadline === null) return false;
    const ms = Math.min(MAX_TASK_WAIT_MS, Date.parse(deadline) - deps.clock.now().getTime());
    if (ms > 0) await idle(deps, ms, interrupt);
    if (interrupt?.aborted) return false;
    const woken = await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => wakeTaskDeadlines(scope, deadline));
    return woken.length > 0;
  }
}

/** One signal for two (either may be absent). */
function anySignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  return a && b ? AbortSignal.any([a, b]) : (a ?? b);
}
