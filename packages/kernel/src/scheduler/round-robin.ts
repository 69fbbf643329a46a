/** Processes remembered beyond the runnable set before the ones not in it are forgotten (K-9.13). */
export const ROUND_ROBIN_SLACK = 10_000;

/**
 * The scheduler's fairness: when each process last ran, so a round runs the least recently scheduled first (one never
 * scheduled goes first). It remembers the processes of the runnable set it is given, and others (a sleeper, a waiter)
 * until `slack` more have run: then it keeps only those of the set, so a runtime that has run a million processes
 * does not hold a million entries (a process that comes back after that goes first, as a new one would).
 *
 * @example
 * const rr = new RoundRobin();
 * rr.ran('p1');
 * rr.order(['p1', 'p2']); // ['p2', 'p1']: p2 never ran
 */
export class RoundRobin {
  #tick = 0;
  readonly #last = new Map<string, number>();

  constructor(private readonly slack: number = ROUND_ROBIN_SLACK) {}

  /** `runnable` least recently scheduled first. Forgets the processes outside it once more than `slack` are kept. */
  order(runnable: readonly string[]): string[] {
    if (this.#last.size > runnable.length + this.slack) this.#keepOnly(runnable);
    return [...runnable].sort((a, b) => (this.#last.get(a) ?? -1) - (this.#last.get(b) ?? -1));
  }

  /** `pid` has just had its quantum. */
  ran(pid: string): void {
    this.#last.set(pid, this.#tick++);
  }

  /** How many processes it remembers. */
  get size(): number {
    return this.#last.size;
  }

  #keepOnly(runnable: readonly string[]): void {
    const kept = new Map<string, number>();
    for (const pid of runnable) {
      const t = this.#last.get(pid);
      if (t !== undefined) kept.set(pid, t);
    }
    this.#last.clear();
    for (const [pid, t] of kept) this.#last.set(pid, t);
  }
}
