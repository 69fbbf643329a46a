import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * The pool kysely's driver is given: `pg`'s, whose clients answer a query of several statements (deferred
 * transaction control sent in one round trip with the statement after it, `deferred-control.ts`) with the last
 * statement's result, the one kysely reads, where `pg` answers with an array of every statement's result.
 *
 * @example
 * import { Kysely, PostgresDialect } from 'kysely';
 * declare const pool: pg.Pool;
 * const db = new Kysely<object>({ dialect: new PostgresDialect({ pool: lastResultPool(pool) }) });
 */
export function lastResultPool(pool: pg.Pool): PostgresPool {
  // One wrapper per `pg` client: kysely keeps its connection object per client it is handed.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) wrappers.set(client, (wrapper = lastResultClient(client)));
      return wrapper;
    },
    end: () => pool.end(),
  };
}

function lastResultClient(client: pg.PoolClient): PostgresPoolClient {
  function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(first: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>) {
    if (typeof first !== 'string') return (client.query as (c: unknown) => unknown)(first);
    return client.query(first, parameters as unknown[]).then((r) => {
      const last = (Array.isArray(r) ? r.at(-1) : r) as pg.QueryResult;
      return last as unknown as PostgresQueryResult<R>;
    });
  }
  return { query, release: (destroy?: boolean) => client.release(destroy) };
}
