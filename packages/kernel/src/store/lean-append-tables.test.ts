import Database from 'better-sqlite3';
import { sqliteMigrationKit } from '@libos/sdk';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { kernelMigrations } from './kernel-schema.js';

// The migration to lean append tables (issue 9), run on a store as the previous version left it: rows and their
// `seq` kept, the next row after the highest, and no AUTOINCREMENT counter or id index left to write per commit.

const LEAN = '0009_lean_append_tables';
let sqlite: Database.Database;
let db: Kysely<unknown>;

afterEach(async () => {
  await db.destroy();
});

/** A `:memory:` store with the kernel migrations before `LEAN` applied, and a few rows with gaps in `seq`. */
async function storeBeforeLean(): Promise<void> {
  sqlite = new Database(':memory:');
  db = new Kysely({ dialect: new SqliteDialect({ database: sqlite }) });
  const upTo = kernelMigrations.findIndex((m) => m.name === LEAN);
  expect(upTo).toBeGreaterThan(0);
  for (const m of kernelMigrations.slice(0, upTo)) await m.up(db, sqliteMigrationKit(db));
  const event = sqlite.prepare('insert into events (seq, id, ts, pid, type, data) values (?, ?, ?, ?, ?, ?)');
  event.run(1, 'evt_a', 't1', 'pid_1', 'spawned', '{}');
  event.run(7, 'evt_b', 't2', null, 'host', '{"x":1}');
  const audit = sqlite.prepare(
    'insert into audit_records (seq, id, ts, actor, action, target, decision, call_id, details) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  audit.run(3, 'aud_a', 't1', 'host', 'process.spawn', 'process:pid_1', 'ok', null, '{}');
}

const schemaOf = (name: string) =>
  sqlite.prepare(`select type, name, sql from sqlite_master where tbl_name = ? order by name`).all(name) as {
    type: string;
    name: string;
    sql: string | null;
  }[];

describe('lean append tables', () => {
  it('[K-9.5] keeps every row and its seq; the next row continues after the highest; no counter, no id index', async () => {
    await storeBeforeLean();
    await kernelMigrations.find((m) => m.name === LEAN)!.up(db, sqliteMigrationKit(db));
    expect(sqlite.prepare('select seq, id, pid, type, data from events order by seq').all()).toEqual([
      { seq: 1, id: 'evt_a', pid: 'pid_1', type: 'spawned', data: '{}' },
      { seq: 7, id: 'evt_b', pid: null, type: 'host', data: '{"x":1}' },
    ]);
    expect(sqlite.prepare('select seq, id, actor, action from audit_records').all()).toEqual([
      { seq: 3, id: 'aud_a', actor: 'host', action: 'process.spawn' },
    ]);
    const next = sqlite.prepare(`insert into events (id, ts, pid, type, data) values ('evt_c', 't3', null, 'x', '{}')`).run();
    expect(Number(next.lastInsertRowid)).toBe(8);
    for (const table of ['events', 'audit_records']) {
      const objects = schemaOf(table);
      expect(objects.find((o) => o.type === 'table')!.sql).not.toMatch(/autoincrement|unique/i);
      expect(objects.filter((o) => o.type === 'index').map((o) => o.name)).toEqual([
        table === 'events' ? 'events_by_pid' : 'audit_by_actor',
      ]);
    }
    const counters = sqlite.prepare(`select name from sqlite_sequence where name in ('events', 'audit_records')`).all();
    expect(counters).toEqual([]);
  });

  it('[K-8.7] run again on a store that has it, it fails as an applied migration does (already exists)', async () => {
    await storeBeforeLean();
    const lean = kernelMigrations.find((m) => m.name === LEAN)!;
    await lean.up(db, sqliteMigrationKit(db));
    await expect(lean.up(db, sqliteMigrationKit(db))).rejects.toThrow(/already exists/);
    expect(sqlite.prepare('select count(*) as n from events').get()).toEqual({ n: 2 });
  });
});
