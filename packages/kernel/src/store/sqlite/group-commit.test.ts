import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { TableMemo } from '../store-memo.js';
import { DeferredSavepoints } from './deferred-savepoints.js';
import { GroupCommit, type GroupCommitLimits, REDO_MARK_KEY, replayRedoLog, statementRole } from './group-commit.js';
import { redoLogPath } from './redo-log.js';

const dirs: string[] = [];
const open: Database.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) if (db.open) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A store file with the two tables group commit needs: `libos_meta` and a table `t` to write. */
function store(setup = (_db: Database.Database) => {}): { path: string; db: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), 'libos-group-'));
  dirs.push(dir);
  const path = join(dir, 'store.db');
  const db = connect(path);
  db.exec('create table libos_meta (key text primary key, value text not null); create table t (v text not null)');
  setup(db);
  return { path, db };
}

function connect(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  open.push(db);
  return db;
}

/** Runs `sql` on `db` as the store adapter does: the write is told to group commit once it ran. */
const runner =
  (db: Database.Database, group: GroupCommit) =>
  (sql: string, params: unknown[] = []) => {
    const role = statementRole(sql);
    if (role.kind === 'write') group.beforeWrite();
    db.prepare(sql).run(params);
    group.ran(role, sql, params);
  };

/** A store with group commit enabled (`limits` as given, else the defaults), and a runner for its statements. */
function grouped(limits?: GroupCommitLimits, setup?: (db: Database.Database) => void) {
  const { path, db } = store(setup);
  const group = new GroupCommit(db, path, new TableMemo(), limits);
  group.enable();
  return { path, db, group, run: runner(db, group) };
}

/** One committed unit per value, each inserting it into `t`. */
function insertUnits(g: ReturnType<typeof grouped>, values: readonly string[]): void {
  for (const v of values) {
    g.group.begin();
    g.run('insert into t (v) values (?)', [v]);
    g.group.commit();
  }
}

const rows = (db: Database.Database) => (db.prepare('select v from t order by rowid').all() as { v: string }[]).map((r) => r.v);

/** The process dies: its connection goes away without a commit (SQLite rolls back what it had not committed). */
const crash = (db: Database.Database) => db.close();

describe('group commit', () => {
  it('[K-9.7] units acknowledged but not yet in SQLite survive a crash: the next open replays them from the log', () => {
    const g = grouped();
    const { path, db } = g;
    insertUnits(g, ['a', 'b', 'c']);
    crash(db);
    const after = connect(path);
    expect(rows(after)).toEqual([]); // SQLite itself never committed them
    expect(replayRedoLog(after, path)).toBe(3);
    expect(rows(after)).toEqual(['a', 'b', 'c']);
    expect(replayRedoLog(after, path)).toBe(0); // the mark says they are in; a second open replays nothing
    expect(rows(after)).toEqual(['a', 'b', 'c']);
  });

  it('[K-9.7] a unit rolled back, and the part of a unit rolled back to a savepoint, are neither kept nor replayed', () => {
    const { path, db, group, run } = grouped();
    group.begin();
    run('insert into t (v) values (?)', ['kept-1']);
    run('savepoint sp_a');
    run('insert into t (v) values (?)', ['undone']);
    run('rollback to sp_a');
    run('release sp_a');
    run('insert into t (v) values (?)', ['kept-2']);
    group.commit();
    group.begin();
    run('insert into t (v) values (?)', ['rolled-back']);
    group.rollback();
    expect(rows(db)).toEqual(['kept-1', 'kept-2']);
    crash(db);
    const after = connect(path);
    replayRedoLog(after, path);
    expect(rows(after)).toEqual(['kept-1', 'kept-2']);
  });

  it('[K-9.19] with deferred savepoints, a unit shares its savepoint with its first call; undoing that call undoes it in the log', () => {
    const { path, db } = store();
    const sent: string[] = [];
    // Wired as the store adapter wires them: the unit's own savepoint goes through the deferred savepoints too.
    const savepoints = new DeferredSavepoints((sql) => {
      sent.push(sql);
      run(sql);
    });
    const group = new GroupCommit(db, path, new TableMemo(), undefined, (sql) => savepoints.exec(sql));
    group.enable();
    const run = (sql: string, params: unknown[] = []) => {
      const role = statementRole(sql);
      if (role.kind === 'write') {
        savepoints.beforeWrite();
        group.beforeWrite();
      }
      db.prepare(sql).run(params);
      group.ran(role, sql, params);
    };
    group.begin();
    savepoints.exec('savepoint libos_sp_0'); // the unit's first call: nothing written before it
    run('insert into t (v) values (?)', ['undone']);
    savepoints.exec('rollback to libos_sp_0');
    savepoints.exec('release libos_sp_0');
    run('insert into t (v) values (?)', ['kept']);
    group.commit();
    savepoints.reset();
    group.begin(); // a unit that only reads sends no savepoint at all
    db.prepare('select count(*) from t').get();
    group.commit();
    savepoints.reset();
    expect(sent).toEqual(['savepoint libos_unit', 'rollback to libos_unit', 'release libos_unit']);
    expect(rows(db)).toEqual(['kept']);
    crash(db);
    const after = connect(path);
    expect(replayRedoLog(after, path)).toBe(1);
    expect(rows(after)).toEqual(['kept']);
  });

  it('[K-9.7] a flush commits the batch and empties the log; close removes the log file', () => {
    const { path, db, group, run } = grouped();
    group.begin();
    run('insert into t (v) values (?)', ['a']);
    group.commit();
    expect(db.inTransaction).toBe(true);
    group.flush();
    expect(db.inTransaction).toBe(false);
    expect(db.prepare('select value from libos_meta where key = ?').get(REDO_MARK_KEY)).toEqual({ value: '1' });
    group.begin();
    run('insert into t (v) values (?)', ['b']);
    group.commit();
    group.close();
    expect(existsSync(redoLogPath(path))).toBe(false);
    crash(db);
    expect(rows(connect(path))).toEqual(['a', 'b']);
  });

  it('[K-9.7] a write outside any unit commits the batch first and then stands alone', () => {
    const g = grouped();
    const { path, db, run } = g;
    insertUnits(g, ['unit']);
    run('insert into t (v) values (?)', ['alone']);
    expect(db.inTransaction).toBe(false);
    crash(db);
    expect(rows(connect(path))).toEqual(['unit', 'alone']);
  });

  it('[K-9.7] the batch commits by itself after maxUnits units', () => {
    const g = grouped({ maxUnits: 2, maxBytes: 1 << 20, maxDelayMs: 60_000 });
    const { path, db } = g;
    insertUnits(g, ['a', 'b', 'c']);
    crash(db);
    const after = connect(path);
    expect(rows(after)).toEqual(['a', 'b']);
    replayRedoLog(after, path);
    expect(rows(after)).toEqual(['a', 'b', 'c']);
  });

  it('[K-9.7] the batch commits by itself maxDelayMs after its first unit, once the event loop is free', async () => {
    const g = grouped({ maxUnits: 1000, maxBytes: 1 << 20, maxDelayMs: 5 });
    insertUnits(g, ['a', 'b']);
    expect(g.db.inTransaction).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(g.db.inTransaction).toBe(false);
    crash(g.db);
    expect(rows(connect(g.path))).toEqual(['a', 'b']);
  });

  it('[K-9.7] a full store fails the unit that does not fit and keeps every unit committed before it', () => {
    const { path, db, group, run } = grouped(undefined, (d) => d.pragma('max_page_count = 12'));
    const committed: string[] = [];
    let failure: unknown;
    for (let i = 0; i < 200 && failure === undefined; i++) {
      group.begin();
      try {
        run('insert into t (v) values (?)', [`${i}:${'x'.repeat(1500)}`]);
        group.commit();
        committed.push(`${i}`);
      } catch (err) {
        failure = err;
        group.rollback();
      }
    }
    expect((failure as { code?: string }).code).toBe('SQLITE_FULL');
    expect(rows(db).map((v) => v.split(':')[0])).toEqual(committed);
    crash(db);
    const after = connect(path);
    replayRedoLog(after, path);
    expect(rows(after).map((v) => v.split(':')[0])).toEqual(committed);
  });

  it('[K-9.7] a redo log that cannot be written (a full disk) fails the unit with disk_full and undoes it', () => {
    const { path, db } = store();
    symlinkSync('/dev/full', redoLogPath(path)); // every write to it fails with ENOSPC
    const group = new GroupCommit(db, path, new TableMemo());
    group.enable();
    const run = runner(db, group);
    group.begin();
    run('insert into t (v) values (?)', ['lost']);
    expect(() => group.commit()).toThrow(expect.objectContaining({ code: 'disk_full', message: expect.stringContaining('redo log') }));
    group.rollback(); // what kysely does after a failed commit: nothing left to undo
    expect(rows(db)).toEqual([]);
    group.begin();
    run('select count(*) from t');
    group.commit(); // a unit that wrote nothing needs no log record, so it still commits
    expect(rows(db)).toEqual([]);
  });

  it('[K-9.7] a log that does not replay leaves the store as it was and names the log', () => {
    const g = grouped();
    const { path, db } = g;
    insertUnits(g, ['a']);
    crash(db);
    const after = connect(path);
    after.exec("drop table t; create table t (v text not null check (v <> 'a'))");
    expect(() => replayRedoLog(after, path)).toThrow(/store_corrupt|redo log .*store\.db-redo does not replay|does not replay/);
    expect(after.inTransaction).toBe(false);
    expect(rows(after)).toEqual([]);
  });
});
