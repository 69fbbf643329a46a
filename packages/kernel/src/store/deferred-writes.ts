import { CompiledQuery, PostgresAdapter } from 'kysely';

const SEND_DEFERRED = Symbol('libos.sendDeferred');
const MISSED = new WeakSet<object>();

/**
 * Makes the store send the guarded writes it deferred in `store`'s transaction (`runGuarded`: PostgreSQL's driver
 * holds them for the unit's next round trip, K-15.23), so a miss fails the unit now: before a tool acts outside the
 * store on the charge it just made. Nothing goes to the server when nothing is deferred, and nothing at all on a
 * store that never defers (SQLite runs a guarded write at once).
 *
 * @example
 * import type { TxScope } from './transaction.js';
 * declare const scope: TxScope, sideEffects: boolean;
 * if (sideEffects) await sendDeferredWrites(scope.store);
 */
export async function sendDeferredWrites(store: {
  getExecutor(): { readonly adapter: object };
  executeQuery(q: CompiledQuery): Promise<unknown>;
}): Promise<void> {
  if (!(store.getExecutor().adapter instanceof PostgresAdapter)) return;
  await store.executeQuery(Object.assign({ ...CompiledQuery.raw('select 1') }, { [SEND_DEFERRED]: true }));
}

/** Whether `query` is `sendDeferredWrites`'s: the driver sends what it deferred and answers no rows. */
export const sendsDeferred = (query: CompiledQuery): boolean => (query as { [SEND_DEFERRED]?: boolean })[SEND_DEFERRED] === true;

/** Marks `err` as the error of a deferred guarded write that missed (the driver's), and returns it. */
export function deferredMiss<E extends object>(err: E): E {
  MISSED.add(err);
  return err;
}

/**
 * Whether `err` is a deferred guarded write's miss: the unit's view of a guarded row (a budget account) was stale, so
 * the write it guarded never counted, wherever in the unit the miss surfaced.
 */
export const isDeferredMiss = (err: unknown): boolean => typeof err === 'object' && err !== null && MISSED.has(err);
