import { accessSync, constants, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { LibosError } from '@libos/sdk';
import { storeFault } from './store-faults.js';

/** The table every libOS store has (its first migration run creates it): a SQLite file with tables but not this one is another's. */
export const STORE_MARKER_TABLE = 'libos_meta';

const isBusy = (err: unknown) =>
  err instanceof Error && /SQLITE_BUSY|database is locked/i.test(`${(err as { code?: string }).code ?? ''} ${err.message}`);

const lockedError = (location: string, cause: unknown) =>
  new LibosError(
    'store_locked',
    `store ${location} is already open for writing by another runtime (one writer at a time); close it first`,
    {
      details: { path: location },
      cause,
    },
  );

/** An error met while opening: busy is `store_locked`, a store fault keeps its code, anything else names the file. */
export function openError(err: unknown, location: string): LibosError {
  if (err instanceof LibosError) return err;
  if (isBusy(err)) return lockedError(location, err);
  const message = `cannot open store ${location}: ${(err as Error).message}`;
  return storeFault(err, location) ?? new LibosError('internal_error', message, { details: { path: location }, cause: err });
}

/**
 * What a read-only connection cannot read because a writer died mid-transaction: a hot rollback journal
 * (`SQLITE_READONLY_ROLLBACK`) or a write-ahead log whose index must be rebuilt (`SQLITE_READONLY_RECOVERY`,
 * `SQLITE_READONLY_CANTINIT`). Only a writable connection can recover them, so the probe leaves the check to it.
 */
const NEEDS_RECOVERY = new Set(['SQLITE_READONLY_ROLLBACK', 'SQLITE_READONLY_RECOVERY', 'SQLITE_READONLY_CANTINIT']);

/**
 * Refuses, before anything is written, a path that is not a libOS store: a directory or other non-file is
 * `not_a_libos_store`, an unreadable database `store_corrupt`, a SQLite file of another application (tables, but
 * no `libos_meta`) `not_a_libos_store`. Read through a read-only connection, so the file is left byte for byte as
 * it was (no journal rollback, no checkpoint, no mode change). An empty file is a new store.
 *
 * Returns `'recover'` when a writer was killed mid-transaction (a crash while the store was being created, say) and
 * the file can only be read once SQLite has recovered it: the caller then opens it for writing, which rolls the
 * unfinished transaction back (as any SQLite connection would), and checks its tables with `assertLibosTables`
 * before writing anything of its own.
 */
export function assertLibosStoreFile(location: string): 'checked' | 'recover' {
  const notAStore = (why: string) => new LibosError('not_a_libos_store', `store ${location} ${why}`, { details: { path: location } });
  const st = statSync(location);
  if (st.isDirectory())
    throw notAStore(`is a directory, not a libOS store file; pass the path of a store file (e.g. ${location}/libos.db)`);
  if (!st.isFile()) throw notAStore('is not a regular file, so not a libOS store');
  if (st.size === 0) return 'checked';
  let probe: Database.Database | undefined;
  try {
    probe = new Database(location, { readonly: true, fileMustExist: true, timeout: 200 });
    assertLibosTables(probe, location);
    return 'checked';
  } catch (err) {
    if (NEEDS_RECOVERY.has((err as { code?: string }).code ?? '')) return 'recover';
    throw openError(err, location);
  } finally {
    probe?.close();
  }
}

/** Refuses (`not_a_libos_store`, naming up to 5 tables) a database with tables but no `libos_meta`. */
export function assertLibosTables(sqlite: Database.Database, location: string): void {
  const rows = sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[];
  const tables = rows.map((r) => r.name);
  if (tables.length > 0 && !tables.includes(STORE_MARKER_TABLE)) {
    const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, … (${tables.length} tables)` : '');
    const why = `is a SQLite database of another application (tables: ${shown}; no ${STORE_MARKER_TABLE})`;
    throw new LibosError('not_a_libos_store', `store ${location} ${why}; libOS leaves it unchanged: pass a new path or a libOS store`, {
      details: { path: location, tables: tables.slice(0, 20) },
    });
  }
}

/**
 * Refuses a store libOS could read but not write (SQLite would open it read-only without a word, and every write
 * would then fail as an I/O error): the file, or the folder its journal files go in, is read-only to this process.
 */
export function assertWritable(location: string, exists: boolean): void {
  const paths = exists ? [location, dirname(location)] : [dirname(location)];
  for (const path of paths) {
    try {
      accessSync(path, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw openError(err, location);
      const why = `is read-only (${path} is not writable: ${code})`;
      throw new LibosError('store_read_only', `store ${location} ${why}; libOS writes its store and files beside it: make both writable`, {
        details: { path: location, not_writable: path },
        cause: err,
      });
    }
  }
}
