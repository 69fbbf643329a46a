import type { KernelDeps } from '../internal/kernel-deps.js';
import { runQuantum, type QuantumOptions, type QuantumResult } from '../executor/run-quantum.js';

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
 * answer, a message or a child's exit makes them runnable again in its own transaction.
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
      if (rows.length === 0) return { quanta: results.length, idle: true, results };
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
}
