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
export async function seenAfterReopen(db: OmDb, payloads: PayloadStore, record: ObjectRecord | null): Promise<ObjectRecord | null> {
  return record === null ? null : (await allSeenAfterReopen(db, payloads, [record]))[0]!;
}

/** `seenAfterReopen` for many records, one update for all those it marks. */
export async function allSeenAfterReopen(db: OmDb, payloads: PayloadStore, records: readonly ObjectRecord[]): Promise<ObjectRecord[]> {
  const lost = records.filter((r) => r.lifecycle === 'live' && !payloads.has(r.oid)).map((r) => r.oid);
  if (lost.length === 0) return [...records];
  await markPayloadUnavailable(db, lost, PAYLOAD_LOST_MARKER);
  const marked = new Set(lost);
  return records.map((r) => (marked.has(r.oid) ? { ...r, lifecycle: 'payload_unavailable' } : r));
}
