import { CompiledQuery } from 'kysely';

const SEND_DEFERRED = Symbol('libos.sendDeferred');
const MISSED = new WeakSet<object>();

/**
 * Makes the store send the guarded writes it deferred in `store`'s transaction (`runGuarded`: PostgreSQL's driver
 * holds them for the unit's next round trip, K-15.23), so a miss fails the unit now: before a tool acts outside the
 * store on the charge it just made. Nothing goes to the server when nothing is deferred. Call it only on a store
 * that defers (`OpenedStore.defersGuards`): another runs its `select 1`, harmless but a statement for nothing.
 *
 * @example
 * import type { TxScope } from './transaction.js';
 * declare const scope: TxScope, sideEffects: boolean, defersGuards: boolean;
 * if (sideEffects && defersGuards) await sendDeferredWrites(scope.store);
 */
export async function sendDeferredWrites(store: { executeQuery(q: CompiledQuery): Promise<unknown> }): Promise<void> {
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
