import { LibosError } from '@libos/sdk';
import pg from 'pg';
import { leaseHolders, leaseSessionName, namedHolders } from './lease-holders.js';
import { watchLease } from './lease-watch.js';
import { connectError } from './postgres-faults.js';
import type { PostgresTarget } from './postgres-url.js';
import { CONNECT_TIMEOUT_MS } from './writer-lease.js';

/** How long a host waits for the hosts ahead of it to finish opening (migrations, checks) before it gives up. */
export const OPEN_WAIT_MS = 60_000;

/** A host's share of a store many hosts run on: a session of its own, holding the schema's lock in shared mode. */
export interface SharedLease {
  /** The host's session: open checks, heartbeats and the roster run here, never on the store's pool. */
  readonly client: pg.Client;
  /** Lets the next host open (the open lock is held from `takeSharedLease` until this). Idempotent. */
  endOpen(): Promise<void>;
  /** Throws `store_poisoned` once the session dropped (`lease-watch.ts`). */
  assertHeld(): void;
  /** Ends the session, which releases both locks. */
  release(): Promise<void>;
}

/**
 * Joins a store that many runtime hosts share (issue 15). The session holds the schema's advisory lock in shared mode
 * (`pg_try_advisory_lock_shared`, the key the single-host writer lease takes exclusively), so a single-host runtime
 * and a group of hosts exclude each other (`store_locked`), and a host that dies lets go of it with its session.
 * Then it waits, at most `OPEN_WAIT_MS`, for the open lock: hosts migrate and check the store one at a time.
 *
 * @example
 * import { postgresTarget } from './postgres-url.js';
 * const lease = await takeSharedLease(postgresTarget('postgres://postgres@127.0.0.1/test?schema=agents'));
 * await lease.endOpen();
 * await lease.release();
 */
export async function takeSharedLease(target: PostgresTarget, hostId?: string): Promise<SharedLease> {
  const client = new pg.Client({
    connectionString: target.connectionString,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: leaseSessionName(hostId),
  });
  const watch = watchLease(client, target.location, 'host lease');
  const fail = async (err: unknown): Promise<never> => {
    await client.end().catch(() => undefined);
    if ((err as { code?: unknown }).code === '57014')
      throw new LibosError(
        'store_locked',
        `store ${target.location}: another host held the open lock for ${OPEN_WAIT_MS / 1000} s (migrating or stuck); try again`,
        { details: { path: target.location } },
      );
    throw err instanceof LibosError ? err : connectError(err, target.location);
  };
  try {
    await client.connect();
  } catch (err) {
    return fail(err);
  }
  try {
    const { rows } = await client.query<{ held: boolean }>(`select pg_try_advisory_lock_shared(hashtext('libos'), hashtext($1)) as held`, [
      target.schema,
    ]);
    if (rows[0]?.held !== true) {
      const holders = await leaseHolders(client, target.schema).catch(() => []);
      const by = holders.length > 0 ? ` (${namedHolders(holders)})` : '';
      throw new LibosError(
        'store_locked',
        `store ${target.location} is open for writing by a single-host runtime${by}; close it first, or open every runtime as a host`,
        { details: { path: target.location, holders: holders.map((h) => h.name) } },
      );
    }
    await client.query(`set statement_timeout = ${OPEN_WAIT_MS}`);
    await client.query(`select pg_advisory_lock(hashtext('libos-open'), hashtext($1))`, [target.schema]);
    await client.query('set statement_timeout = 0');
    // The roster and the leases live in the store's schema (a validated SQL name; it may not exist yet, which is fine).
    await client.query(`set search_path to ${target.schema}`);
  } catch (err) {
    return fail(err);
  }
  watch.held();
  let opening = true;
  return {
    client,
    assertHeld: watch.assertHeld,
    async endOpen() {
      if (!opening) return;
      opening = false;
      await client.query(`select pg_advisory_unlock(hashtext('libos-open'), hashtext($1))`, [target.schema]);
    },
    release: watch.release,
  };
}
