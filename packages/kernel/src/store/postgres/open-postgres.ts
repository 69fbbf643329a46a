import { Kysely, PostgresDialect, type Driver, type KyselyPlugin } from 'kysely';
import pg from 'pg';
import type { KernelDatabase } from '../kernel-database.js';
import { bindMemo, bindTransactionMemo } from '../memo-of.js';
import type { OpenedStore } from '../opened-store.js';
import { TableMemo } from '../store-memo.js';
import { lastResultPool } from './last-result-pool.js';
import { MemoDriver } from './memo-driver.js';
import { assertLibosSchema } from './open-checks.js';
import { connectError } from './postgres-faults.js';
import { postgresTarget } from './postgres-url.js';
import { sqliteLikeTypes } from './row-types.js';
import { takeSharedLease } from './shared-lease.js';
import { CONNECT_TIMEOUT_MS, takeWriterLease } from './writer-lease.js';

export interface PostgresStoreOptions {
  /** Kysely plugins of the store's Kysely instance; every statement they let through still tells the memo. */
  readonly plugins?: readonly KyselyPlugin[];
  /**
   * Open as one of many hosts sharing the store (`shared-lease.ts`): no exclusive writer lease, no read cache (other
   * hosts write too); the store's `shared` part carries the host's own session.
   */
  readonly shared?: boolean;
  /** The host's id, named by the lease session (`lease-holders.ts`) so a refused runtime can say who holds the store. */
  readonly hostId?: string;
}

/**
 * Opens a PostgreSQL store (`postgres://user@host:5432/db?schema=name`; schema `public` when none): takes the writer
 * lease (`writer-lease.ts`, `store_locked` when another runtime holds it), refuses a schema that is not a libOS store
 * (`open-checks.ts`), creates the schema when missing, then runs every query through one pooled connection (one
 * writer: transactions queue as on SQLite) whose `search_path` is the schema and whose rows read as SQLite's do
 * (`row-types.ts`). Every write tells the memo (`memo-driver.ts`). A lost lease fails every later unit of work with
 * `store_poisoned` (`writer-lease.ts`). No append log, no `exec`, no group commit.
 *
 * @example
 * const store = await openPostgresStore('postgres://postgres@127.0.0.1:5432/test?schema=agents');
 * await store.close();
 */
export async function openPostgresStore(url: string, opts: PostgresStoreOptions = {}): Promise<OpenedStore> {
  const target = postgresTarget(url);
  const shared = opts.shared ? await takeSharedLease(target, opts.hostId) : undefined;
  const lease = shared ?? (await takeWriterLease(target));
  let pool: pg.Pool | undefined;
  try {
    await assertLibosSchema(lease.client, target);
    await lease.client.query(`create schema if not exists ${target.schema}`);
    pool = new pg.Pool({
      connectionString: target.connectionString,
      max: 1,
      idleTimeoutMillis: 0,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      options: `-c search_path=${target.schema} -c TimeZone=UTC`,
      types: sqliteLikeTypes as unknown as pg.CustomTypesConfig,
    });
    // The pooled connection that drops is said once, by its own listener (idle or checked out: a checked-out client
    // has no pool listener, and unhandled 'error' would end the host). The pool discards it and the next statement
    // connects anew (same role, same schema); a unit it was in fails on its next statement. The lease is watched on
    // its own session (`writer-lease.ts`). The pool's 'error' repeats the idle client's, already said.
    pool.on('connect', (client) =>
      client.on('error', (err) =>
        process.emitWarning(`store ${target.location}: its pooled connection dropped (${err.message}); the next statement reconnects`, {
          type: 'LibosWarning',
          code: 'store_connection_lost',
        }),
      ),
    );
    pool.on('error', () => undefined);
    // The one connection is made now, so a server gone since the lease fails the open, not the first query.
    (await pool.connect()).release();
  } catch (err) {
    await pool?.end().catch(() => undefined);
    await lease.release();
    throw connectError(err, target.location);
  }
  const memo = new TableMemo();
  const location = target.location;
  const dialect = new (class extends PostgresDialect {
    override createDriver(): Driver {
      return new MemoDriver(super.createDriver(), memo, location, lease.assertHeld);
    }
  })({ pool: lastResultPool(pool) });
  const db = new Kysely<KernelDatabase>({ dialect, plugins: [...(opts.plugins ?? [])] });
  // Many hosts: another host's write never reaches this memo, so it serves one transaction at a time, emptied at
  // its start (`memoForTransaction`); on the root handle nothing is cached.
  if (shared) bindTransactionMemo(db, memo);
  else bindMemo(db, memo);
  return {
    dialect: 'postgres',
    defersGuards: true,
    ...(shared ? { shared: { session: shared.client, endOpen: () => shared.endOpen() } } : {}),
    db,
    memo,
    location,
    startGroupCommit: () => undefined,
    flush: () => undefined,
    close: async () => {
      try {
        await db.destroy();
      } finally {
        await lease.release();
      }
    },
  };
}
