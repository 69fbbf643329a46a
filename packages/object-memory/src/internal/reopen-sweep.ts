import type { ServiceScope } from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';
import { liveOids, markPayloadUnavailable } from './object-repo.js';
import { omDb, PAYLOAD_LOST_MARKER } from './schema.js';

/**
 * The reopen sweep (spec §5), run before any work is admitted: every live row whose payload is not cached
 * becomes `payload_unavailable` with the lost-marker. Metadata, labels, provenance, version and grants stay.
 * Returns the oids it marked.
 *
 * @example
 * await sweepAfterReopen(scope, payloads); // ['obj_…', …]
 */
export async function sweepAfterReopen(scope: ServiceScope, payloads: PayloadStore): Promise<string[]> {
  const db = omDb(scope.store);
  const lost = (await liveOids(db)).filter((oid) => !payloads.has(oid));
  if (lost.length === 0) return lost;
  await markPayloadUnavailable(db, lost, PAYLOAD_LOST_MARKER);
  await scope.events.emit('object_payloads_unavailable', { count: lost.length });
  await scope.audit.record({ action: 'object.reopen_sweep', decision: 'fail_closed', details: { payload_unavailable: lost.length, oids: lost.slice(0, 100) } });
  return lost;
}
