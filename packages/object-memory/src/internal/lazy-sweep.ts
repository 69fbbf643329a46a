import type { RuntimeInstance } from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';
import { markPayloadUnavailable } from './object-repo.js';
import type { ObjectRecord } from './records.js';
import { PAYLOAD_LOST_MARKER, type OmDb } from './schema.js';

/**
 * The reopen sweep, lazily (docs/behaviour/object-memory.md; a reopen costs nothing per stored Object). Payloads live only in this
 * runtime's payload store, so a live row whose payload is not there was written before the Runtime reopened: it is
 * `payload_unavailable`, and the first read that needs its lifecycle marks it so (the lost-marker) in the reader's
 * transaction. Rows nobody reads are never touched; what every read sees is what an eager sweep at open would leave.
 *
 * @example
 * declare const payloads: PayloadStore, record: ObjectRecord | null;
 * const holder = await seenAfterReopen(db, payloads, record); // lifecycle 'payload_unavailable' if it was lost
 */
export async function seenAfterReopen(
  db: OmDb,
  payloads: PayloadStore,
  record: ObjectRecord | null,
  runtime?: RuntimeInstance,
): Promise<ObjectRecord | null> {
  return record === null ? null : (await allSeenAfterReopen(db, payloads, [record], runtime))[0]!;
}

/**
 * `seenAfterReopen` for many records, one update for all those it marks. Among many hosts on one store (`runtime`
 * says), a payload that another live host's runtime holds is not lost: the record comes back `heldBy` that host,
 * unmarked, and reading it here is `payload_unavailable` naming the host.
 */
export async function allSeenAfterReopen(
  db: OmDb,
  payloads: PayloadStore,
  records: readonly ObjectRecord[],
  runtime?: RuntimeInstance,
): Promise<ObjectRecord[]> {
  const missing = records.filter((r) => r.lifecycle === 'live' && !payloads.has(r.oid));
  if (missing.length === 0) return [...records];
  const heldBy = new Map<string, string>();
  const holders = new Map<string | null, string | null>();
  for (const r of missing) {
    if (!holders.has(r.payloadInstance)) holders.set(r.payloadInstance, await payloadHolder(r, runtime));
    const host = holders.get(r.payloadInstance);
    if (host) heldBy.set(r.oid, host);
  }
  const lost = missing.filter((r) => !heldBy.has(r.oid)).map((r) => r.oid);
  if (lost.length) await markPayloadUnavailable(db, lost, PAYLOAD_LOST_MARKER);
  const marked = new Set(lost);
  return records.map((r) =>
    marked.has(r.oid) ? { ...r, lifecycle: 'payload_unavailable' } : heldBy.has(r.oid) ? { ...r, heldBy: heldBy.get(r.oid)! } : r,
  );
}

/** The live host of a shared store whose runtime holds `record`'s payload (not this one), or null: nobody does. */
export async function payloadHolder(record: ObjectRecord, runtime: RuntimeInstance | undefined): Promise<string | null> {
  const instance = record.payloadInstance;
  if (instance === null || runtime === undefined || instance === runtime.instanceId) return null;
  return runtime.holder(instance);
}
