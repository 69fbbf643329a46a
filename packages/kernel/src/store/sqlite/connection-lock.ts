/** What `acquire` returns when the lock was free: nothing to wait for. */
const FREE: Promise<void> = Promise.resolve();

/**
 * The lock on a SQLite store's one connection (K-9.25): whoever holds it (a unit of work, or one query or transaction
 * on the root handle) is the only one running statements on it. Waiters get it in the order they asked, handed over
 * directly on release, so `tryAcquire` never jumps the queue. A unit begins with `tryAcquire` (no promise when the
 * connection is free: the usual case); kysely's connection provider waits with `acquire`.
 *
 * @example
 * const lock = new ConnectionLock();
 * lock.tryAcquire(); // true: held now
 * const next = lock.acquire(); // settles once released
 * lock.release(); // hands it to `next`'s waiter: still held
 */
export class ConnectionLock {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  /** Takes the lock if it is free and nobody waits for it; false otherwise (nothing changes). */
  tryAcquire(): boolean {
    if (this.#held) return false;
    this.#held = true;
    return true;
  }

  /** Settles when the lock is the caller's: at once if it is free. */
  acquire(): Promise<void> {
    if (this.tryAcquire()) return FREE;
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Hands the lock to the longest waiter, or frees it. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}
