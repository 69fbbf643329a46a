import type { Clock } from '@libos/sdk';

/**
 * A clock that moves only when told: `now()` is fixed until `advance(ms)` or `set(iso)`, and `sleep(ms)` (the
 * scheduler's idle wait for a timer) advances it instead of waiting, so a test of a deadline runs at once.
 *
 * @example
 * const clock = new FakeClock('2026-01-01T00:00:00.000Z');
 * clock.advance(60_000);
 * clock.now().toISOString(); // '2026-01-01T00:01:00.000Z'
 */
export class FakeClock implements Clock {
  #ms: number;

  constructor(start: string | Date = '2026-01-01T00:00:00.000Z') {
    const ms = new Date(start).getTime();
    if (Number.isNaN(ms)) throw new TypeError(`FakeClock: start must be an ISO-8601 time (got ${String(start)})`);
    this.#ms = ms;
  }

  now(): Date {
    return new Date(this.#ms);
  }

  /** Moves the clock forward `ms` milliseconds (at least 0). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new TypeError(`FakeClock.advance: ms must be a finite number >= 0 (got ${ms})`);
    this.#ms += ms;
  }

  /** Sets the clock to `at`; it may not go back. */
  set(at: string | Date): void {
    const ms = new Date(at).getTime();
    if (Number.isNaN(ms) || ms < this.#ms) throw new TypeError(`FakeClock.set: at must be a time at or after ${this.now().toISOString()}`);
    this.#ms = ms;
  }

  async sleep(ms: number): Promise<void> {
    this.advance(Math.max(0, ms));
  }
}
