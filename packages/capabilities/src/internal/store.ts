import { LibosError, type ServiceScope, type StoreMemo } from '@libos/sdk';
import type { Kysely } from 'kysely';

/** Table names this package owns. */
export const T = {
  grants: 'cap_grants',
  reservations: 'cap_reservations',
  accounts: 'cap_budget_accounts',
  usageReservations: 'cap_budget_reservations',
  labels: 'cap_process_labels',
  sources: 'cap_process_sources',
  sinkRules: 'cap_sink_rules',
  meta: 'cap_meta',
  manifests: 'cap_manifests',
  permissionRequests: 'cap_permission_requests',
} as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Db = Kysely<any>;

/** The store memo of each handle a scope handed us, so lookups given only the handle read through it. */
const memos = new WeakMap<Db, StoreMemo>();

/** The scope's store transaction as a Kysely handle. */
export function dbOf(scope: ServiceScope): Db {
  const s = scope.store as Db | undefined;
  if (!s || typeof (s as { selectFrom?: unknown }).selectFrom !== 'function') {
    throw new LibosError('internal_error', 'capabilities: scope.store must be a Kysely transaction');
  }
  if (scope.memo) memos.set(s, scope.memo);
  return s;
}

/**
 * `load()` through the store memo of `db` (`StoreMemo.read` in @libos/sdk), or straight `load()` when its scope has
 * none. Values are shared: callers must not change them.
 *
 * @example
 * declare const subject: string, loadGrants: (db: Db, subject: string) => Promise<unknown[]>;
 * const rows = await readThrough(db, [T.grants], `grants:${subject}`, () => loadGrants(db, subject));
 */
export function readThrough<V>(db: Db, tables: readonly string[], key: string, load: () => Promise<V>): Promise<V> {
  const memo = memos.get(db);
  return memo ? memo.read(key, tables, load) : load();
}

/** Whether reads on `db` go through a store memo (a value read once is kept until its tables change). */
export const hasMemo = (db: Db): boolean => memos.has(db);

/** The value the store memo of `db` holds under `key`, valid for `tables`; `undefined` when none (or no memo). */
export function peekThrough<V>(db: Db, tables: readonly string[], key: string): V | undefined {
  return memos.get(db)?.peek<V>(key, tables);
}

/** After writing `tables` itself: caches `value` under `key` as the state it left (no-op without a memo). */
export function writeThrough<V>(db: Db, tables: readonly string[], key: string, value: V): void {
  memos.get(db)?.write(key, tables, value);
}

/** Parses a JSON text column; a corrupt value is a store fault, never silently defaulted. */
export function parseJsonColumn<T>(text: unknown, column: string): T {
  if (typeof text !== 'string') throw new LibosError('internal_error', `capabilities: column ${column} is not JSON text`);
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new LibosError('internal_error', `capabilities: column ${column} holds invalid JSON`, { cause });
  }
}

/** Number of rows an update/delete changed. */
export function changed(result: { numUpdatedRows?: bigint; numDeletedRows?: bigint } | readonly { numUpdatedRows?: bigint }[]): number {
  const r = Array.isArray(result) ? result[0] : result;
  return Number(
    (r as { numUpdatedRows?: bigint; numDeletedRows?: bigint } | undefined)?.numUpdatedRows ??
      (r as { numDeletedRows?: bigint } | undefined)?.numDeletedRows ??
      0n,
  );
}
