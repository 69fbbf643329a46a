import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { preparedQuery, preparedQueryPerSize } from '@libos/sdk';
import { describe, expect, it } from 'vitest';

interface Db {
  t: { id: string; kind: string; n: number; note: string | null };
}

// Compiling needs no connection: the PostgreSQL handle is never connected.
const sqlite = () => new Kysely<Db>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
const postgres = () => new Kysely<Db>({ dialect: new PostgresDialect({ pool: {} as never }) });

const byKindAndIds = (db: Kysely<Db>, kind: string, ids: readonly string[]) =>
  db.selectFrom('t').selectAll().where('kind', '=', kind).where('id', 'in', ids).where('note', 'is not', null).orderBy('id').limit(5);

describe('preparedQuery', () => {
  it('[K-9.8] is the SQL and parameters of the query built anew, on SQLite and on PostgreSQL', () => {
    const q = preparedQuery(3, (db: Kysely<Db>, [kind, a, b]) => byKindAndIds(db, kind!, [a!, b!]));
    for (const db of [sqlite(), postgres()]) {
      for (const [kind, a, b] of [
        ['x', 'id_1', 'id_2'],
        ['y', 'id_3', 'id_3'],
      ] as const) {
        const fresh = byKindAndIds(db, kind, [a, b]).compile();
        const bound = q(db, [kind, a, b]);
        expect(bound.sql).toBe(fresh.sql);
        expect(bound.parameters).toEqual(fresh.parameters);
      }
    }
    expect(q(sqlite(), ['x', 'a', 'b']).sql).toContain('?');
    expect(q(postgres(), ['x', 'a', 'b']).sql).toContain('$1');
  });

  it('[K-9.8] runs with each call its own arguments; an argument used twice and constants (numbers, null) keep their places', async () => {
    const db = sqlite();
    await sql`create table t (id text primary key, kind text, n integer, note text)`.execute(db);
    const insert = preparedQuery(2, (h: Kysely<Db>, [id, kind]) => h.insertInto('t').values({ id: id!, kind: kind!, n: 7, note: id! }));
    await db.executeQuery(insert(db, ['a', 'k1']));
    await db.executeQuery(insert(db, ['b', 'k2']));
    const rows = await db.selectFrom('t').selectAll().orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'a', kind: 'k1', n: 7, note: 'a' },
      { id: 'b', kind: 'k2', n: 7, note: 'b' },
    ]);
    const update = preparedQuery(2, (h: Kysely<Db>, [note, id]) =>
      h.updateTable('t').set({ note }).where('id', '=', id!).where('n', '=', 7),
    );
    const r = await db.executeQuery(update(db, [null, 'b']));
    expect(r.numAffectedRows).toBe(1n);
    expect(await db.selectFrom('t').select('note').where('id', '=', 'b').executeTakeFirst()).toEqual({ note: null });
    await db.destroy();
  });
});

describe('preparedQueryPerSize', () => {
  it('[K-9.8] is, for each size, the query built anew with that many values; one prepared query per size', () => {
    const byIds = preparedQueryPerSize(
      (n) => 1 + n,
      (db: Kysely<Db>, [kind, ...ids], n) => {
        expect(ids).toHaveLength(n);
        return byKindAndIds(db, kind!, ids);
      },
    );
    expect(byIds(2)).toBe(byIds(2));
    expect(byIds(3)).not.toBe(byIds(2));
    for (const db of [sqlite(), postgres()]) {
      for (const ids of [['a'], ['a', 'b'], ['c', 'd', 'e', 'f']]) {
        const fresh = byKindAndIds(db, 'k', ids).compile();
        const bound = byIds(ids.length)(db, ['k', ...ids]);
        expect(bound.sql).toBe(fresh.sql);
        expect(bound.parameters).toEqual(fresh.parameters);
      }
    }
  });
});
