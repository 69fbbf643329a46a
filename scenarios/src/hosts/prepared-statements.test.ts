// Prepared statements on PostgreSQL (K-15.24): a statement with parameters runs under a name per statement text, so
// each connection has the server parse and plan it once; a table that changes shape under a prepared `select *` (a
// newer libOS migrated the store) fails that one statement, and the next run prepares it anew. The statements that
// ride in a round trip of several (K-15.20) are prepared too, by SQL PREPARE, and go as `execute` (K-15.29).
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import { CompiledQuery, sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres, watchQueries } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_prepared');

/** Adds a column to `libos_meta` from a session of its own: what a newer libOS's migration does under a running host. */
async function addColumn(name: string): Promise<void> {
  const other = new pg.Client({ connectionString: PG_URL });
  await other.connect();
  try {
    await other.query(`alter table ${schema}.libos_meta add column ${name} text`);
  } finally {
    await other.end();
  }
}

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
    await addColumn('k24_extra');
    await expect(read()).rejects.toThrow(/cached plan must not change result type/);
    expect(await read()).toEqual([{ key: 'k24_key', value: 'v', k24_extra: null }]);
  });

  /** The queries sent while `fn` runs in a transaction of its own, as sent (not expanded). */
  const sentIn = async <T>(fn: (store: Parameters<Parameters<Runtime['transaction']>[0]>[0]['store']) => Promise<T>) => {
    const sent: string[] = [];
    const result = await watchQueries(
      () => rt!.transaction((scope) => fn(scope.store)),
      (text) => sent.push(text),
      true,
    );
    return { sent, result };
  };

  it('[K-15.29] a text the server will not prepare runs inline in its transaction, which the refusal left intact', async () => {
    // $1 is text beside `key` and an integer beside 1: PostgreSQL cannot give it one type, so it refuses to prepare
    // the text; inline, each literal takes the type of its own context.
    const query = CompiledQuery.raw('select count(*)::int as n from libos_meta where key = $1 or 1 = $1', ['1']);
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await sentIn(async (store) => (await store.executeQuery<{ n: number }>(query)).rows[0]!.n));
    const [n] = runs.map((r) => r.result);
    expect(n).toBeGreaterThan(0); // `1 = '1'` holds on every row
    expect(runs.map((r) => r.result)).toEqual([n, n, n]);
    expect(runs[0]!.sent).toEqual([`begin; select count(*)::int as n from libos_meta where key = '1' or 1 = '1'`, 'commit']);
    expect(runs[1]!.sent).toEqual([expect.stringMatching(/^prepare libos_rt_\d+ as select count/), ...runs[0]!.sent]);
    expect(runs[2]!.sent).toEqual(runs[0]!.sent); // refused once: not tried again
  });

  it('[K-15.29] a table changed under a prepared round-trip select * fails it once; the next run prepares it anew', async () => {
    const query = CompiledQuery.raw('select * from libos_meta where key = $1', ['k29_key']);
    await rt!.transaction((scope) => sql`insert into libos_meta (key, value) values (${'k29_key'}, ${'v'})`.execute(scope.store));
    const read = () => sentIn(async (store) => (await store.executeQuery<Record<string, unknown>>(query)).rows);
    await read();
    const prepared = await read();
    expect(prepared.sent.at(-2)).toMatch(/^begin; execute libos_rt_\d+\('k29_key'\)$/);
    expect(prepared.result).toEqual([{ key: 'k29_key', value: 'v', k24_extra: null }]);
    await addColumn('k29_extra');
    await expect(read()).rejects.toThrow(/cached plan must not change result type/);
    const again = await read(); // inline, and wanted again
    expect(again.sent[0]).toBe(`begin; select * from libos_meta where key = 'k29_key'`);
    expect(again.result).toEqual([{ key: 'k29_key', value: 'v', k24_extra: null, k29_extra: null }]);
    const anew = await read();
    expect(anew.sent.slice(0, 2)).toEqual([
      expect.stringMatching(/^prepare libos_rt_\d+ as select \* from libos_meta/),
      expect.stringMatching(/^begin; execute libos_rt_\d+\('k29_key'\)$/),
    ]);
    expect(anew.sent[1]).not.toBe(prepared.sent.at(-2)); // a fresh name
    expect(anew.result).toEqual(again.result);
  });
});
