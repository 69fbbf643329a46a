// Prepared statements on PostgreSQL (K-15.24): a statement with parameters runs under a name per statement text, so
// each connection has the server parse and plan it once; a table that changes shape under a prepared `select *` (a
// newer libOS migrated the store) fails that one statement, and the next run prepares it anew.
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_prepared');

describe.skipIf(unavailable !== null)('[K-15.24] prepared statements on PostgreSQL', () => {
  let rt: Runtime | undefined;
  afterAll(async () => {
    await rt?.close();
    await dropSchema(schema);
  });

  it('[K-15.24] a statement with parameters is prepared once per connection and answers each run with its own values', async () => {
    rt = await openRuntime({ path: url, plugins: [capabilities(), session()] });
    const { answers, names } = await rt.transaction(async (scope) => {
      await sql`select 1`.execute(scope.store); // carries the deferred BEGIN (one simple query, K-15.20)
      const answers: number[] = [];
      for (const n of [1, 2, 3]) {
        const r = await sql<{ k24_probe: number }>`select ${n}::int + 40 as k24_probe`.execute(scope.store);
        answers.push(r.rows[0]!.k24_probe);
      }
      // The named statements this transaction's connection has prepared for that text.
      const prepared = await sql<{ name: string }>`select name from pg_prepared_statements where statement like ${'%k24_probe%'}`.execute(
        scope.store,
      );
      return { answers, names: prepared.rows.map((row) => row.name) };
    });
    expect(answers).toEqual([41, 42, 43]);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^libos_\d+$/);
  });

  it('[K-15.24] a table changed under a prepared select * fails that statement once; the next run prepares it anew', async () => {
    const read = () =>
      rt!.transaction(async (scope) => {
        await sql`select 1`.execute(scope.store);
        const r = await sql<Record<string, unknown>>`select * from libos_meta where key = ${'k24_key'}`.execute(scope.store);
        return r.rows;
      });
    await rt!.transaction((scope) => sql`insert into libos_meta (key, value) values (${'k24_key'}, ${'v'})`.execute(scope.store));
    expect(await read()).toEqual([{ key: 'k24_key', value: 'v' }]);
    const other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    try {
      await other.query(`alter table ${schema}.libos_meta add column k24_extra text`);
    } finally {
      await other.end();
    }
    await expect(read()).rejects.toThrow(/cached plan must not change result type/);
    expect(await read()).toEqual([{ key: 'k24_key', value: 'v', k24_extra: null }]);
  });
});
