import type { ServiceScope } from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';

/**
 * Writes a payload into the runtime-local store and registers its undo: if the call's transaction rolls back,
 * the previous payload (or its absence) comes back, so a failed call changes nothing.
 *
 * @example
 * declare const payloads: PayloadStore;
 * writePayload(ctx, payloads, oid, { entries: ['next'] });
 */
export function writePayload(scope: ServiceScope, payloads: PayloadStore, oid: string, payload: unknown): void {
  const had = payloads.has(oid);
  const previous = payloads.get(oid);
  payloads.set(oid, payload);
  scope.onRollback(() => {
    if (had) payloads.set(oid, previous);
    else payloads.delete(oid);
  });
}
