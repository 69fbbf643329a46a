import type { OwnedResource, OwnershipResolver } from './plugin.js';

/**
 * A read cache over the store, owned by the store adapter (the writer lease makes it sound: no other connection
 * writes). A value read through it is kept until a write touches one of the tables it was read from, or any
 * transaction or savepoint rolls back; the adapter sees every statement, so nothing can write past it. Values are
 * shared between readers: treat them as immutable.
 *
 * @example
 * declare const subject: string, loadGrants: (store: unknown, subject: string) => Promise<unknown[]>;
 * const row = await memoRead(scope, ['cap_grants'], `grants:${subject}`, () => loadGrants(scope.store, subject));
 */
export interface StoreMemo {
  /** The value cached under `key` while none of `tables` changed since it was read; else `load()`'s, then cached. */
  read<T>(key: string, tables: readonly string[], load: () => Promise<T>): Promise<T>;
  /**
   * After the caller wrote `tables` itself: caches `value` under `key` as the state those writes left (write-through),
   * so the next read is free. Other keys on those tables stay invalid.
   */
  write<T>(key: string, tables: readonly string[], value: T): void;
  /**
   * The value cached under `key` while none of `tables` changed since it was read, or `undefined`: nothing is
   * loaded. For a write-through that extends what was read (K-9.30): peek before the write, then `write` the value
   * the write left.
   */
  peek<T>(key: string, tables: readonly string[]): T | undefined;
}

/**
 * `scope.memo.read(...)` when the scope has a memo (every kernel scope does), else `load()` (a store adapter without
 * one, a test double).
 *
 * @example
 * declare const readProcess: (store: unknown, pid: string) => Promise<unknown>;
 * const p = await memoRead(scope, ['processes'], `process:${pid}`, () => readProcess(scope.store, pid));
 */
export function memoRead<T>(
  scope: { readonly memo?: StoreMemo },
  tables: readonly string[],
  key: string,
  load: () => Promise<T>,
): Promise<T> {
  return scope.memo ? scope.memo.read(key, tables, load) : load();
}

/**
 * A memo dependency on the rows of `table` that a lookup by key found: an INSERT of new rows leaves it valid, while an
 * UPDATE, DELETE, REPLACE or upsert of the table (or anything the adapter cannot classify) makes it stale. Only for a
 * value read from rows named by their key and found there: a lookup that found nothing, or a scan, depends on the
 * whole table (an insert may add the row it looks for).
 *
 * @example
 * declare const findOwner: () => Promise<{ owner: string }>;
 * const owner = await memoRead(scope, [foundRows('om_objects')], `owner:${oid}`, findOwner);
 */
export const foundRows = (table: string): string => `${table}${FOUND_ROWS_SUFFIX}`;

/** What `foundRows` appends to a table's name; a store adapter bumps both names for every write but an insert. */
export const FOUND_ROWS_SUFFIX = '#found';

/** The memo key of the owner of `kind:body`: what the authority engine reads through and `rememberOwner` writes. */
export const ownerMemoKey = (kind: string, body: string): string => `owner:${kind}:${body}`;

/**
 * Hands the store memo the owner of `kind:body` that a plugin has just written or read in this transaction (the row
 * its `keyed` resolver's `ownerOf` reads, as it is now), so the authority engine's next check of that resource does
 * not look it up again (K-9.29). `owned` must be exactly what `resolver.ownerOf` would answer. Only a `keyed`
 * resolver that names its `tables` is memoized; for any other, and without a memo, nothing happens.
 *
 * @example
 * declare const resolver: OwnershipResolver, justInserted: OwnedResource;
 * rememberOwner(scope, resolver, justInserted); // the next check of `${resolver.kind}:${justInserted.body}` reads no row
 */
export function rememberOwner(scope: { readonly memo?: StoreMemo }, resolver: OwnershipResolver, owned: OwnedResource): void {
  if (!scope.memo || resolver.keyed !== true || !resolver.tables) return;
  scope.memo.write(ownerMemoKey(resolver.kind, owned.body), resolver.tables.map(foundRows), Object.freeze(owned));
}
