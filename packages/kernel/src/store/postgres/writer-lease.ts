import { LibosError } from '@libos/sdk';
import pg from 'pg';
import { type LeaseHolder, leaseHolders, leaseSessionName, namedHolders } from './lease-holders.js';
import { watchLease } from './lease-watch.js';
import { connectError } from './postgres-faults.js';
import type { PostgresTarget } from './postgres-url.js';

/** How long a connect may take before the server counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 5000;

/** The writer lease of one PostgreSQL store: a session of its own holding the schema's advisory lock. */
export interface WriterLease {
  /** The leased session (the open checks read through it before the store's pool exists). */
  readonly client: pg.Client;
  /**
   * Throws `store_poisoned` naming the cause once the leased session has dropped (server restart,
   * `pg_terminate_backend`, network): the lock went with it, so no unit of work may start or commit. A no-op while held.
   */
  assertHeld(): void;
  /** Ends the session, which releases the lock. */
  release(): Promise<void>;
}

/**
 * Takes the store's writer lease, as the SQLite adapter's exclusive lock does: one session of its own, held for the
 * runtime's life, holding `pg_try_advisory_lock(hashtext('libos'), hashtext(<schema>))` (advisory locks are per
 * database, so the schema keys it). Taken elsewhere: `store_locked` naming the store. Connecting fails as one line
 * naming the cause (`connectError`): unreachable, wrong credentials, no such database. Once held, the session is
 * watched: its 'error' or 'end' (other than `release`) marks the lease lost (`assertHeld` throws from then on) and
 * raises one process warning naming the store and the cause.
 *
 * @example
 * import { postgresTarget } from './postgres-url.js';
 * const lease = await takeWriterLease(postgresTarget('postgres://postgres@127.0.0.1/test?schema=agents'));
 * await lease.release();
 */
export async function takeWriterLease(target: PostgresTarget): Promise<WriterLease> {
  const client = new pg.Client({
    connectionString: target.connectionString,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: leaseSessionName(),
  });
  const watch = watchLease(client, target.location, 'writer lease');
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw connectError(err, target.location);
  }
  let held: boolean;
  try {
    const { rows } = await client.query<{ held: boolean }>(`select pg_try_advisory_lock(hashtext('libos'), hashtext($1)) as held`, [
      target.schema,
    ]);
    held = rows[0]?.held === true;
  } catch (err) {
    await client.end().catch(() => undefined);
    throw connectError(err, target.location);
  }
  if (!held) {
    const holders = await leaseHolders(client, target.schema).catch(() => []);
    await client.end().catch(() => undefined);
    throw new LibosError('store_locked', lockedMessage(target.location, holders), {
      details: { path: target.location, holders: holders.map((h) => h.name) },
    });
  }
  watch.held();
  return { client, assertHeld: watch.assertHeld, release: watch.release };
}

/**
 * Why a single-host runtime may not open the store, naming who holds it: hosts of many (open as a host too) or
 * another single-host runtime (one writer at a time).
 */
function lockedMessage(location: string, holders: readonly LeaseHolder[]): string {
  const hosts = holders.filter((h) => h.shared);
  if (hosts.length > 0)
    return (
      `store ${location} is shared by ${hosts.length} runtime host(s) (${namedHolders(hosts)}): open this runtime as a ` +
      'host too (libos --host-id <id>, openRuntime({ host: { id } }))'
    );
  const by = holders.length > 0 ? ` (${namedHolders(holders)})` : '';
  return `store ${location} is already open for writing by another runtime${by}; one writer at a time: close it first`;
}
