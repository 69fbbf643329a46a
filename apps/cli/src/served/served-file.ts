import { closeSync, existsSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';

/** What `libos serve` records next to the store it serves, so other `libos` commands can reach it. */
export interface ServedStore {
  /** The server's origin, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  /** Its bearer token (the file is 0600: only its owner can read it). */
  readonly token: string;
  /** The serving process. */
  readonly pid: number;
  /** The store's canonical path. */
  readonly db: string;
}

/**
 * Whether `--db` names a PostgreSQL server (`postgres://…`, `postgresql://…`) rather than a file: it has no folder
 * for a served file, and whether a store is there is the runtime's to find out.
 *
 * @example
 * isStoreUrl('postgres://app@db/libos?schema=agents'); // true
 */
export const isStoreUrl = (db: string): boolean => /^postgres(?:ql)?:\/\//i.test(db);

/** The canonical path of a store as the kernel names it (`rt.location`): resolved, symlinks followed when it exists. */
export function storeLocation(db: string): string {
  const abs = resolve(db);
  return existsSync(abs) ? realpathSync(abs) : abs;
}

/**
 * The file `libos serve` keeps while it serves `db`: `<store>.serve.json` beside it (e.g. `.libos/libos.db.serve.json`).
 * None for `:memory:`.
 */
export function servedFilePath(db: string): string | null {
  return db === ':memory:' || isStoreUrl(db) ? null : `${storeLocation(db)}.serve.json`;
}

/**
 * Records `{url, token, pid, db}` for the store, readable by its owner only (0600), written whole (a temp file
 * renamed) so a reader never sees half of it. Returns the path, for `removeServedFile`.
 */
export function recordServedFile(served: ServedStore): string | null {
  const path = servedFilePath(served.db);
  if (path === null) return null;
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(served)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  return path;
}

/** Removes the record, if it is still this process's (a later server's record is left alone). */
export function removeServedFile(path: string | null): void {
  if (path === null) return;
  const current = readRecord(path);
  if (current && current.pid !== process.pid) return;
  rmSync(path, { force: true });
}

function readRecord(path: string): ServedStore | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const v = JSON.parse(text) as Partial<ServedStore>;
    if (typeof v.url !== 'string' || typeof v.token !== 'string' || typeof v.pid !== 'number' || typeof v.db !== 'string') return null;
    return { url: v.url, token: v.token, pid: v.pid, db: v.db };
  } catch {
    return null;
  }
}

/** True while process `pid` exists (one we may not signal still counts). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The server recorded for `db`, or null: no record, an unreadable one, or one whose process is gone (a server that
 * was killed; its stale record is removed).
 */
export function findServedStore(db: string): ServedStore | null {
  const path = servedFilePath(db);
  if (path === null || !existsSync(path)) return null;
  const record = readRecord(path);
  if (!record) return null;
  if (!alive(record.pid)) {
    rmSync(path, { force: true });
    return null;
  }
  return record;
}

/**
 * Forgets a record whose server does not answer at all (its process id was reused after a crash): removed if it is
 * still the same record. A command then opens the store itself, which the lease refuses if anyone still writes it.
 */
export function forgetServedStore(served: ServedStore): void {
  const path = servedFilePath(served.db);
  if (path === null) return;
  const current = readRecord(path);
  if (current && current.pid === served.pid && current.url === served.url && current.token === served.token) rmSync(path, { force: true });
}
