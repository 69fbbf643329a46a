import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { PreparedNames } from './prepared-names.js';

/** Transaction control that rides with a statement (`deferred-control.ts`): never the answer to the query. */
const CONTROL = new Set(['BEGIN', 'SAVEPOINT', 'COMMIT']);

/** The result kysely reads of a query of several statements: the last one's that is not transaction control. */
function answerOf(results: readonly pg.QueryResult[]): pg.QueryResult {
  for (let i = results.length - 1; i > 0; i--) if (!CONTROL.has(results[i]!.command)) return results[i]!;
  return results[0]!;
}

/**
 * The pool kysely's driver is given: `pg`'s, whose clients answer a query of several statements (deferred
 * transaction control sent in one round trip with the statement after it, a COMMIT after a transaction's last
 * statement: `deferred-control.ts`) with that statement's result, the one kysely reads, where `pg` answers with an
 * array of every statement's result. A statement with parameters runs prepared under its text's name
 * (`prepared-names.ts`, K-15.24): parsed and planned once per connection.
 *
 * @example
 * import { Kysely, PostgresDialect } from 'kysely';
 * declare const pool: pg.Pool;
 * const db = new Kysely<object>({ dialect: new PostgresDialect({ pool: lastResultPool(pool) }) });
 */
export function lastResultPool(pool: pg.Pool): PostgresPool {
  // One wrapper per `pg` client: kysely keeps its connection object per client it is handed.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const names = new PreparedNames();
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) wrappers.set(client, (wrapper = lastResultClient(client, names)));
      return wrapper;
    },
    end: () => pool.end(),
  };
}

function lastResultClient(client: pg.PoolClient, names: PreparedNames): PostgresPoolClient {
  function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(first: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>) {
    if (typeof first !== 'string') return (client.query as (c: unknown) => unknown)(first);
    const values = (parameters ?? []) as unknown[];
    const name = names.of(first, values.length);
    const sent = name === undefined ? client.query(first, values) : client.query({ name, text: first, values });
    return sent.then(
      (r) => {
        const answer = Array.isArray(r) ? answerOf(r as pg.QueryResult[]) : r;
        return answer as unknown as PostgresQueryResult<R>;
      },
      (err: unknown) => {
        if (name !== undefined) names.failed(first, err);
        throw err;
      },
    );
  }
  return { query, release: (destroy?: boolean) => client.release(destroy) };
}
