import type { KernelDeps } from '../internal/kernel-deps.js';
import { runQuantum, type QuantumOptions, type QuantumResult } from '../executor/run-quantum.js';
import { earliestTaskDeadline, wakeTaskDeadlines } from '../processes/runners.js';
import { inTransaction } from '../store/transaction.js';

/** The longest the scheduler sleeps for a task wait's deadline (wait_object_task's timeout bound). */
export const MAX_TASK_WAIT_MS = 60_000;

export interface RunOptions extends QuantumOptions {
  /** The global number of quanta this run may spend (shared by all processes); omitted = until idle. */
  readonly maxQuanta?: number;
  /** Called after every quantum (progress for long runs). */
  readonly onQuantum?: (r: QuantumResult) => void;
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
export class Scheduler {
  #tick = 0;
  readonly #last = new Map<string, number>();
  readonly #emptyReplies = new Map<string, number>();
  readonly #stalledTurns = new Map<string, number>();

  constructor(private readonly deps: () => KernelDeps) {}

  async runUntilIdle(opts: RunOptions): Promise<RunReport> {
    const deps = this.deps();
    const results: QuantumResult[] = [];
    for (;;) {
      const rows = await deps.db.selectFrom('processes').select(['pid', 'created_at']).where('status', '=', 'runnable').orderBy('created_at').orderBy('pid').execute();
      if (rows.length === 0) {
        if (await this.#timeOutTaskWaits(deps)) continue;
        return { quanta: results.length, idle: true, results };
      }
      const round = rows.map((r) => r.pid as string).sort((a, b) => (this.#last.get(a) ?? -1) - (this.#last.get(b) ?? -1));
      for (const pid of round) {
        if (opts.maxQuanta !== undefined && results.length >= opts.maxQuanta) return { quanta: results.length, idle: false, results };
        const r = await runQuantum(deps, pid, { ...opts, emptyReplies: this.#emptyReplies, stalledTurns: this.#stalledTurns });
        this.#last.set(pid, this.#tick++);
        if (r.kind === 'skipped') continue;
        results.push(r);
        opts.onQuantum?.(r);
      }
    }
  }

  /**
   * Nothing is runnable: a process parked in a task wait with a deadline (`wait_object_task{timeout_s}`) is woken at
   * that deadline (the scheduler sleeps until then, at most MAX_TASK_WAIT_MS), so its call returns the task's
   * current state. Returns whether it woke any.
   */
  async #timeOutTaskWaits(deps: KernelDeps): Promise<boolean> {
    const deadline = await earliestTaskDeadline(deps.db);
    if (deadline === null) return false;
    const ms = Math.min(MAX_TASK_WAIT_MS, Date.parse(deadline) - deps.clock.now().getTime());
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    const woken = await inTransaction(deps.db, deps.scopes, 'host', null, (scope) => wakeTaskDeadlines(scope, deadline));
    return woken.length > 0;
  }
}
