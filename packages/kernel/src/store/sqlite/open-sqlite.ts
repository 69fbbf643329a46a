import { chmodSync, existsSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import {
  Kysely,
  SqliteDialect,
  type Driver,
  type KyselyConfig,
  type KyselyPlugin,
  type QueryCompiler,
  type SqliteDialectConfig,
} from 'kysely';
import { LibosError } from '@libos/sdk';
import type { AppendLog, AuditRow, EventRow } from '../append-log.js';
import { bindDirectQueries } from '../direct-queries.js';
import { bindMemo } from '../memo-of.js';
import { TableMemo } from '../store-memo.js';
import { DeferredSavepoints } from './deferred-savepoints.js';
import { GroupCommit, replayRedoLog, statementRole, type StatementRole } from './group-commit.js';
import { statementEffect } from '../statement-effect.js';
import { objectRows, SchemaGeneration } from './row-objects.js';
import { SqliteStoreCompiler } from './sqlite-compiler.js';
import { directUnits } from './direct-units.js';
import { StoreDriver, type StatementSource, type StoreStatement } from './store-driver.js';
import { asStoreFault } from './store-faults.js';
import { assertLibosStoreFile, assertLibosTables, assertWritable, openError } from './store-file.js';
import type { KernelDatabase } from '../kernel-database.js';
import type { OpenedStore } from '../opened-store.js';

/** Everything SQLite-specific lives in this folder; the contract it meets is `../opened-store.ts`. */
export type { OpenedStore } from '../opened-store.js';

/** The SQLite store: its append log and `exec` are always there. */
export type SqliteStore = OpenedStore & Required<Pick<OpenedStore, 'appendLog' | 'exec'>>;

export interface SqliteStoreOptions {
  /**
   * Caps the store at this many pages (`PRAGMA max_page_count`, 4,096 bytes each): a write that would grow it
   * further fails with `disk_full`, exactly as on a full disk. Unset: no cap of libOS's own.
   */
  readonly maxPageCount?: number;
  /**
   * Kysely plugins of the store's Kysely instance (kysely's `plugins` option; see `OpenRuntimeOptions.kyselyPlugins`).
   * Every statement they let through, or rewrite, still runs through this adapter, so the memo sees every write.
   */
  readonly plugins?: readonly KyselyPlugin[];
}

export { STORE_MARKER_TABLE } from './store-file.js';

/**
 * Opens a SQLite store with a writer lease: `locking_mode=EXCLUSIVE` plus one `BEGIN EXCLUSIVE` at open keep
 * every other connection (in this process or another) out until close. A second writable open fails with
 * `store_locked` naming the file. A path that is not a libOS store, a read-only file and a corrupt one are refused
 * with their own codes before anything is written; a store fault met later (full disk, corruption) surfaces from
 * every query with its code (`store-faults.ts`), never as a raw SQLite error.
 */
export function openSqliteStore(path: string, opts: SqliteStoreOptions = {}): SqliteStore {
  const { maxPageCount, plugins = [] } = opts;
  if (maxPageCount !== undefined && (!Number.isInteger(maxPageCount) || maxPageCount < 1)) {
    throw new LibosError('invalid_arguments', `maxPageCount: must be a positive integer (got ${maxPageCount})`, {
      details: { field: 'maxPageCount' },
    });
  }
  const memory = path === ':memory:';
  let location = path;
  let recover = false;
  if (!memory) {
    const abs = resolve(path);
    mkdirSync(dirname(abs), { recursive: true });
    location = existsSync(abs) ? realpathSync(abs) : abs;
    const exists = existsSync(location);
    recover = exists && assertLibosStoreFile(location) === 'recover';
    assertWritable(location, exists);
  }
  let sqlite: Database.Database;
  try {
    sqlite = new Database(location, { timeout: 200 });
  } catch (err) {
    throw openError(err, location);
  }
  try {
    // A store left mid-transaction by a killed writer: this read rolls that transaction back, then the tables are checked.
    if (recover) assertLibosTables(sqlite, location);
    sqlite.pragma('locking_mode = EXCLUSIVE');
    sqlite.exec('BEGIN EXCLUSIVE; COMMIT;');
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // Savepoints (each call inside a unit of work) journal the pages they change: in memory, not a temp file.
    sqlite.pragma('temp_store = MEMORY');
    sqlite.pragma('foreign_keys = ON');
    if (maxPageCount !== undefined) sqlite.pragma(`max_page_count = ${maxPageCount}`);
    // Units a crashed runtime acknowledged but SQLite had not committed yet (group commit) are replayed first.
    if (!memory) replayRedoLog(sqlite, location);
  } catch (err) {
    sqlite.close();
    throw openError(err, location);
  }
  if (!memory) {
    try {
      chmodSync(location, 0o600);
    } catch {
      // best effort: a read-only file system or foreign owner keeps its mode; the lease still holds
    }
  }
  const memo = new TableMemo();
  const group = new GroupCommit(sqlite, location, memo, undefined, (sql) => savepoints.exec(sql));
  const savepoints = new DeferredSavepoints(
    (sql) => void statements.prepare(sql).run([]),
    () => sqlite.inTransaction,
  );
  const statements = cachingDatabase(sqlite, location, memo, group, savepoints);
  const sqliteConfig: SqliteDialectConfig = { database: sqlite };
  const driver = new StoreDriver(sqliteConfig, statements, group, savepoints, location);
  const dialect = new StoreDialect(sqliteConfig, driver);
  const config: KyselyConfig = { dialect, plugins: [...plugins] };
  const db = new Kysely<KernelDatabase>(config);
  bindMemo(db, memo);
  if (plugins.length === 0) bindDirectQueries(db, directUnits({ db, config, dialect, driver, statements }));
  return {
    dialect: 'sqlite',
    db,
    memo,
    exec: (sql) => savepoints.exec(sql),
    appendLog: sqliteAppendLog(statements),
    location,
    startGroupCommit: () => {
      if (!memory) group.enable();
    },
    flush: () => {
      try {
        group.flush();
      } catch (err) {
        throw asStoreFault(err, location);
      }
    },
    close: async () => {
      await db.destroy();
      await driver.destroy(); // kysely destroys only a driver it used: a store closed unused closes its file too
    },
  };
}

/**
 * The SQLite dialect of the store: its driver is the store's (`store-driver.ts`: units of work under group commit,
 * one connection behind the store's own lock), its compiler `sqlite-compiler.ts` (K-9.12).
 */
class StoreDialect extends SqliteDialect {
  readonly #driver: StoreDriver;

  constructor(config: SqliteDialectConfig, driver: StoreDriver) {
    super(config);
    this.#driver = driver;
  }

  override createQueryCompiler(): QueryCompiler {
    return new SqliteStoreCompiler();
  }

  override createDriver(): Driver {
    return this.#driver;
  }
}

/**
 * Statements kept prepared; kysely emits a small set of distinct SQL texts, so this bound is rarely reached. The
 * oldest prepared goes first when it is (a hit does not reorder: that cost two map writes per statement).
 */
export const STATEMENT_CACHE_SIZE = 512;

/**
 * better-sqlite3 behind kysely, with prepared statements reused by SQL text (kysely's driver prepares every query
 * anew, which was the largest cost of a tool call).
 */
function cachingDatabase(
  sqlite: Database.Database,
  location: string,
  memo: TableMemo,
  group: GroupCommit,
  savepoints: DeferredSavepoints,
): StatementSource {
  const cache = new Map<string, StoreStatement>();
  const schema = new SchemaGeneration();
  return {
    prepare(sql: string): StoreStatement {
      const hit = cache.get(sql);
      if (hit) return hit;
      let stmt: StoreStatement;
      try {
        const notice = memoNotice(sql, memo, schema);
        stmt = storeStatement(sqlite.prepare(sql), location, schema, notice, redoTracker(sql, group, savepoints));
      } catch (err) {
        throw asStoreFault(err, location);
      }
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
      return stmt;
    },
    close(): void {
      cache.clear();
      sqlite.close();
    },
  };
}

/**
 * What running a statement tells the memo, decided once when it is prepared (`statement-effect.ts`); none for a read.
 * One that may change anything (DDL, a rollback) also bumps the schema's generation (`row-objects.ts`).
 */
function memoNotice(sql: string, memo: TableMemo, schema: SchemaGeneration): (() => void) | undefined {
  const effect = statementEffect(sql);
  if (effect.kind === 'none') return undefined;
  if (effect.kind === 'all') {
    return () => {
      schema.bump();
      memo.ran(effect);
    };
  }
  return () => memo.ran(effect);
}

/** What the redo log needs to see of a statement (`group-commit.ts`): none for a read. */
interface RedoTracker {
  before(): void;
  after(parameters: readonly unknown[]): void;
}

/** What a statement needs before it runs and tells after (a read: nothing). A write first opens the deferred savepoints. */
function redoTracker(sql: string, group: GroupCommit, savepoints: DeferredSavepoints): RedoTracker | undefined {
  const role: StatementRole = statementRole(sql);
  if (role.kind === 'read') return undefined;
  return {
    before:
      role.kind === 'write'
        ? () => {
            savepoints.beforeWrite();
            group.beforeWrite();
          }
        : () => {},
    after: (parameters) => group.ran(role, sql, parameters),
  };
}

/**
 * A statement whose store faults (full disk, read-only, corrupt) throw as their LibosError, naming the file; a
 * statement that writes tells the memo first (`notice`), so no cached read outlives the rows it was read from, and
 * the redo log after it ran (`redo`). A reading statement's rows are built as objects in JavaScript (K-9.24).
 */
function storeStatement(
  stmt: Database.Statement,
  location: string,
  schema: SchemaGeneration,
  notice?: () => void,
  redo?: RedoTracker,
): StoreStatement {
  const rows = stmt.reader ? objectRows(stmt, schema) : stmt;
  return {
    reader: stmt.reader,
    all(parameters) {
      notice?.();
      try {
        redo?.before();
        const result = rows.all(parameters);
        redo?.after(parameters);
        return result;
      } catch (err) {
        throw asStoreFault(err, location);
      }
    },
    run(parameters) {
      notice?.();
      try {
        redo?.before();
        const result = stmt.run(parameters);
        redo?.after(parameters);
        return result;
      } catch (err) {
        throw asStoreFault(err, location);
      }
    },
    *iterate(parameters) {
      notice?.();
      try {
        redo?.before();
        yield* rows.iterate(parameters);
        redo?.after(parameters);
      } catch (err) {
        throw asStoreFault(err, location);
      }
    },
  };
}

/** Rows one multi-row INSERT of the append log carries at most: the distinct statement texts stay few (two per size). */
export const APPEND_ROWS_PER_INSERT = 32;

/**
 * The append log on SQLite: one prepared multi-row INSERT per table and row count (up to `APPEND_ROWS_PER_INSERT`
 * rows, more in several), run on the store's one connection, so inside whatever transaction or savepoint is open on
 * it. `seq` is the row id: a statement's rows get consecutive ids (`INTEGER PRIMARY KEY`, one writer), the last one
 * `lastInsertRowid`. Faults surface as their LibosError (store-faults.ts).
 */
function sqliteAppendLog(db: StatementSource): AppendLog {
  const writer = <R>(head: string, columns: number, params: (r: R, into: unknown[]) => void) => {
    // Prepared on first use (the tables exist only once the migrations ran), then kept: no cache lookup per statement.
    const statements: StoreStatement[] = [];
    const tuple = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
    return (rows: readonly R[]): number[] => {
      const seqs: number[] = [];
      for (let at = 0; at < rows.length; at += APPEND_ROWS_PER_INSERT) {
        const n = Math.min(APPEND_ROWS_PER_INSERT, rows.length - at);
        statements[n] ??= db.prepare(`${head} values ${Array.from({ length: n }, () => tuple).join(', ')}`);
        const values: unknown[] = [];
        for (let i = at; i < at + n; i++) params(rows[i]!, values);
        const last = Number(statements[n].run(values).lastInsertRowid);
        for (let i = n - 1; i >= 0; i--) seqs.push(last - i);
      }
      return seqs;
    };
  };
  return {
    events: writer<EventRow>('insert into "events" ("id", "ts", "pid", "type", "data")', 5, (r, v) =>
      v.push(r.id, r.ts, r.pid, r.type, r.data),
    ),
    audit: writer<AuditRow>(
      'insert into "audit_records" ("id", "ts", "actor", "action", "target", "decision", "call_id", "details")',
      8,
      (r, v) => v.push(r.id, r.ts, r.actor, r.action, r.target, r.decision, r.call_id, r.details),
    ),
  };
}
