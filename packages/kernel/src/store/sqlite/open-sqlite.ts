import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { mkdirSync, chmodSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { LibosError } from '@libos/sdk';

/** Everything SQLite-specific lives in this folder; the rest of the kernel speaks kysely only. */
export interface OpenedStore {
  readonly db: Kysely<any>;
  /** Canonical file path, or ':memory:'. */
  readonly location: string;
  close(): Promise<void>;
}

const isBusy = (err: unknown) => err instanceof Error && /SQLITE_BUSY|database is locked/i.test(`${(err as { code?: string }).code ?? ''} ${err.message}`);

/**
 * Opens a SQLite store with a writer lease: `locking_mode=EXCLUSIVE` plus one `BEGIN EXCLUSIVE` at open keep
 * every other connection (in this process or another) out until close. A second writable open fails with
 * `store_locked` naming the file.
 */
export function openSqliteStore(path: string): OpenedStore {
  const memory = path === ':memory:';
  let location = path;
  if (!memory) {
    const abs = resolve(path);
    mkdirSync(dirname(abs), { recursive: true });
    location = existsSync(abs) ? realpathSync(abs) : abs;
  }
  const sqlite = new Database(location, { timeout: 200 });
  try {
    sqlite.pragma('locking_mode = EXCLUSIVE');
    sqlite.exec('BEGIN EXCLUSIVE; COMMIT;');
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
  } catch (err) {
    sqlite.close();
    if (isBusy(err)) {
      throw new LibosError('store_locked', `store ${location} is already open for writing by another runtime (one writer at a time); close it first`, {
        details: { path: location },
        cause: err,
      });
    }
    throw new LibosError('internal_error', `cannot open store ${location}: ${(err as Error).message}`, { cause: err });
  }
  if (!memory) {
    try {
      chmodSync(location, 0o600);
    } catch {
      // best effort: a read-only file system or foreign owner keeps its mode; the lease still holds
    }
  }
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: cachingDatabase(sqlite) }) });
  return {
    db,
    location,
    close: async () => {
      await db.destroy();
    },
  };
}

/** Statements kept prepared; kysely emits a small set of distinct SQL texts, so this bound is rarely reached. */
export const STATEMENT_CACHE_SIZE = 512;

/**
 * better-sqlite3 behind kysely, with prepared statements reused by SQL text (kysely's driver prepares every query
 * anew, which was the largest cost of a tool call: bench/broker-call.mjs). Least recently used statements go first.
 */
function cachingDatabase(sqlite: Database.Database) {
  const cache = new Map<string, Database.Statement>();
  return {
    prepare(sql: string): Database.Statement {
      let stmt = cache.get(sql);
      if (stmt) cache.delete(sql);
      else {
        stmt = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, stmt);
      return stmt;
    },
    close(): void {
      cache.clear();
      sqlite.close();
    },
  };
}
