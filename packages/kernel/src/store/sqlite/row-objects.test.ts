import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type OpenedStore } from './open-sqlite.js';
import { objectRows, SchemaGeneration } from './row-objects.js';

const opened: OpenedStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

describe('objectRows', () => {
  it('[K-9.24] rows are the objects better-sqlite3 itself makes: values, key order, repeated names, __proto__', () => {
    const db = new Database(':memory:');
    db.exec(`create table t (a integer, b text, c blob, d real);
      insert into t values (1, 'x', x'00ff', 1.5), (2, null, null, null)`);
    const queries = [
      'select * from t order by a',
      'select a, b as a, d from t order by a', // a repeated name: the later column wins, in the first one's place
      'select a as "__proto__", b as "x y" from t order by a', // a number: sets nothing
      'select b as "__proto__", a from t order by a', // a null: a row without a prototype
      'select * from t where a > 5', // no rows
    ];
    for (const q of queries) {
      const own = db.prepare(q).all();
      const built = objectRows(db.prepare(q), new SchemaGeneration()).all([]);
      expect(built, q).toStrictEqual(own);
      expect(
        built.map((r) => Object.keys(r as object)),
        q,
      ).toEqual(own.map((r) => Object.keys(r as object)));
      expect([...objectRows(db.prepare(q), new SchemaGeneration()).iterate([])], q).toStrictEqual(own);
    }
    const [row] = objectRows(db.prepare('select 1 as "__proto__"'), new SchemaGeneration()).all([]);
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    const [bare] = objectRows(db.prepare('select null as "__proto__"'), new SchemaGeneration()).all([]);
    expect(Object.getPrototypeOf(bare)).toBe(Object.getPrototypeOf(db.prepare('select null as "__proto__"').get()));
    db.close();
  });

  it('[K-9.24] a kept statement reads its column names again once the schema changed through the store', async () => {
    const s = openSqliteStore(':memory:');
    opened.push(s);
    await sql`create table t (a integer, b text)`.execute(s.db);
    await sql`insert into t values (1, 'x')`.execute(s.db);
    const read = () => sql<Record<string, unknown>>`select * from t`.execute(s.db).then((r) => r.rows);
    expect(await read()).toEqual([{ a: 1, b: 'x' }]);
    await sql`alter table t rename column b to c`.execute(s.db); // as wide as before: only the generation tells
    expect(await read()).toEqual([{ a: 1, c: 'x' }]);
    await sql`alter table t add column d text default 'z'`.execute(s.db);
    expect(await read()).toEqual([{ a: 1, c: 'x', d: 'z' }]);
  });
});
