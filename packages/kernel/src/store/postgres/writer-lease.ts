import { LibosError } from '@libos/sdk';
import pg from 'pg';
import { connectError } from './postgres-faults.js';
import type { PostgresTarget } from './postgres-url.js';

/** How long a connect may take before the server counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 5000;

/** The writer lease of one PostgreSQL store: a session of its own holding the schema's advisory lock. */
export interface WriterLease {
  /** The leased session (the open checks read through it before the store's pool exists). */
  readonly client: pg.Client;
  /** Ends the session, which releases the lock. */
  release(): Promise<void>;
}

/**
 * Takes the store's writer lease, as the SQLite adapter's exclusive lock does: one session of its own, held for the
 * runtime's life, holding `pg_try_advisory_lock(hashtext('libos'), hashtext(<schema>))` (advisory locks are per
 * database, so the schema keys it). Taken elsewhere: `store_locked` naming the store. Connecting fails as one line
 * naming the cause (`connectError`): unreachable, wrong credentials, no such database.
 *
 * @example
 * import { postgresTarget } from './postgres-url.js';
 * const lease = await takeWriterLease(postgresTarget('postgres://postgres@127.0.0.1/test?schema=agents'));
 * await lease.release();
 */
export async function takeWriterLease(target: PostgresTarget): Promise<WriterLease> {
  const client = new pg.Client({ connectionString: target.connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A session that drops later emits 'error'; unhandled, that would end the host process.
  client.on('error', () => undefined);
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
    await client.end().catch(() => undefined);
    throw new LibosError(
      'store_locked',
      `store ${target.location} is already open for writing by another runtime (one writer at a time); close it first`,
      { details: { path: target.location } },
    );
  }
  return { client, release: () => client.end().catch(() => undefined) };
}
