import { LibosError } from '@libos/sdk';
import type pg from 'pg';

/** The watch on a lease's session (`writer-lease.ts`, `shared-lease.ts`). */
export interface LeaseWatch {
  /** From now on, the session's 'error' or 'end' loses the lease. */
  held(): void;
  /** Throws the lost lease's `store_poisoned`, once it is lost. */
  assertHeld(): void;
  /** Ends the session on purpose (not a loss). */
  release(): Promise<void>;
}

/**
 * Watches the session that holds a lease: once `held()`, its 'error' or 'end' (other than `release`) marks the lease
 * lost (`assertHeld` throws `store_poisoned` from then on) and raises one process warning naming the store and cause.
 * Before that, a failure reaches the caller through the rejected connect or query; 'error' always has a listener
 * (unhandled, it would end the host process).
 *
 * @example
 * declare const client: pg.Client;
 * const watch = watchLease(client, 'postgres://127.0.0.1/test?schema=agents', 'writer lease');
 * watch.held();
 * watch.assertHeld(); // throws once the session dropped
 */
export function watchLease(client: pg.Client, location: string, what: string): LeaseWatch {
  let state: 'taking' | 'held' | 'released' = 'taking';
  let lost: LibosError | undefined;
  const lose = (why: string, cause?: unknown) => {
    if (state !== 'held' || lost) return;
    lost = new LibosError(
      'store_poisoned',
      `store ${location} lost its ${what}: the session holding it ${why}; another runtime may write the store ` +
        'now, so this one starts no more units of work: close it and open the store again',
      { details: { path: location }, ...(cause === undefined ? {} : { cause }) },
    );
    process.emitWarning(lost.message, { type: 'LibosWarning', code: 'store_poisoned' });
  };
  client.on('error', (err) => lose(`failed (${err.message})`, err));
  client.on('end', () => lose('ended (server restart, pg_terminate_backend or a dropped connection)'));
  return {
    held: () => void (state = 'held'),
    assertHeld: () => {
      if (lost) throw lost;
    },
    release: () => {
      state = 'released';
      // Ending a session that already dropped rejects; the loss was reported when it happened.
      return client.end().catch(() => undefined);
    },
  };
}
