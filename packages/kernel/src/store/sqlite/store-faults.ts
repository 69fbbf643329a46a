import { LibosError, type ErrorCode } from '@libos/sdk';

/** SQLite result codes (primary, so extended ones like SQLITE_CORRUPT_INDEX match) and what each means for a store. */
const FAULTS: readonly { readonly prefix: string; readonly code: ErrorCode; readonly what: string; readonly fix: string }[] = [
  {
    prefix: 'SQLITE_FULL',
    code: 'disk_full',
    what: 'cannot grow: the disk (or the store size cap) is full',
    fix: 'free space and retry; the failed write was not made',
  },
  {
    prefix: 'SQLITE_READONLY',
    code: 'store_read_only',
    what: 'is read-only',
    fix: 'libOS writes to its store: make the file and its folder writable',
  },
  { prefix: 'SQLITE_CORRUPT', code: 'store_corrupt', what: 'is corrupt', fix: 'restore it from a backup or move it aside' },
  {
    prefix: 'SQLITE_NOTADB',
    code: 'store_corrupt',
    what: 'is not a SQLite database (corrupt, truncated or another kind of file)',
    fix: 'restore it from a backup or move it aside',
  },
];

/** The SQLite result code of a better-sqlite3 error (`SQLITE_FULL`, `SQLITE_CORRUPT_INDEX`, ...), if it is one. */
export function sqliteCode(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * The store fault a SQLite error is, as a LibosError naming the file (`disk_full`, `store_read_only`,
 * `store_corrupt`); `undefined` for any other error (a constraint violation, a bug), which callers keep as it is.
 *
 * @example
 * const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
 * storeFault(full, '/data/libos.db'); // disk_full: store /data/libos.db cannot grow: the disk ... is full
 */
export function storeFault(err: unknown, location: string): LibosError | undefined {
  const code = sqliteCode(err);
  if (code === undefined) return undefined;
  const fault = FAULTS.find((f) => code === f.prefix || code.startsWith(`${f.prefix}_`));
  if (!fault) return undefined;
  return new LibosError(fault.code, `store ${location} ${fault.what} (${code}: ${(err as Error).message}); ${fault.fix}`, {
    details: { path: location, sqlite_code: code },
    cause: err,
  });
}

/** `err` as its store fault when it is one, else unchanged. */
export function asStoreFault(err: unknown, location: string): unknown {
  return storeFault(err, location) ?? err;
}
