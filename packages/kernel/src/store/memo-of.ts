import type { StoreMemo } from '@libos/sdk';

const memos = new WeakMap<object, StoreMemo>();
/** Root handles of stores other hosts write too: their memo serves one transaction at a time (`memoForTransaction`). */
const perTransaction = new WeakMap<object, StoreMemo & { wroteAll(): void }>();

/**
 * The store memo behind a store handle (the root `Kysely` or a transaction begun from it), so code that is handed
 * only a handle reads through the memo too. Handles without one (another adapter, a test's bare Kysely) read the
 * store directly.
 *
 * @example
 * const trx = await db.startTransaction().execute();
 * bindMemo(trx, memoOf(db)); // the transaction shares its root handle's memo
 */
export const memoOf = (db: object): StoreMemo | undefined => memos.get(db);

/** Ties `handle` to `memo` (no-op without one). */
export function bindMemo(handle: object, memo: StoreMemo | undefined): void {
  if (memo) memos.set(handle, memo);
}

/**
 * Ties the root handle `db` of a store that other hosts write too to `memo`, for its transactions only: reads on
 * `db` itself go to the store, and each transaction begun from it gets the memo emptied (`memoForTransaction`).
 */
export function bindTransactionMemo(db: object, memo: StoreMemo & { wroteAll(): void }): void {
  perTransaction.set(db, memo);
}

/**
 * The memo a transaction begun from `db` reads through: the store's own, or, on a store other hosts write too, its
 * per-transaction memo emptied now. Inside one transaction that holds its tree's lock (one connection, one
 * transaction at a time per host) the rows it reads twice are its own tree's, which no other host writes meanwhile,
 * and what it writes itself invalidates them as on a single host; a row another host commits meanwhile is seen as
 * it was when the transaction first read it, as if that commit came after.
 *
 * @example
 * const trx = await db.startTransaction().execute();
 * bindMemo(trx, memoForTransaction(db));
 */
export function memoForTransaction(db: object): StoreMemo | undefined {
  const own = memos.get(db);
  if (own) return own;
  const memo = perTransaction.get(db);
  memo?.wroteAll();
  return memo;
}

/**
 * `load()` through the memo of `db` (see `StoreMemo.read`), or straight `load()` when `db` has none.
 *
 * @example
 * const row = await readThrough(db, ['processes'], `process:${pid}`, () =>
 *   db.selectFrom('processes').selectAll().where('pid', '=', pid).executeTakeFirst(),
 * );
 */
export function readThrough<T>(db: object, tables: readonly string[], key: string, load: () => Promise<T>): Promise<T> {
  const memo = memos.get(db);
  return memo ? memo.read(key, tables, load) : load();
}
