import { preparedQuery, type EmittedEvent, type ServiceScope } from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';
import { releaseEnded } from './release.js';
import type { OmDb } from './schema.js';

/** An exit result's hand-over to `process_result`, compiled once per store (every exit with a result makes one). */
const TO_PROCESS_RESULT = preparedQuery(2, (db: OmDb, [oid, pid]) =>
  db
    .updateTable('om_objects')
    .set({ owner_kind: 'process_result' })
    .where('oid', '=', oid!)
    .where('owner_id', '=', pid!)
    .where('owner_kind', '=', 'process'),
);

/**
 * A process ended (`process_exited`, in its exit transaction): its exit result becomes a `process_result` (owned by
 * the pid still, so its rights hold, but no longer process memory a merge releases); then its memory is merged when
 * nobody else can merge it (`releaseEnded`): a root's at once, a child's when its parent ends (docs/behaviour/session.md
 * S-E8, S-E11).
 */
export async function processEnded(scope: ServiceScope, payloads: PayloadStore, event: EmittedEvent): Promise<void> {
  const pid = typeof event.data.pid === 'string' ? event.data.pid : null;
  if (pid === null) return;
  const outcome = event.data.outcome as { kind?: string; result_oid?: string | null } | undefined;
  if (outcome?.kind === 'exited' && typeof outcome.result_oid === 'string') {
    const db = scope.store as OmDb;
    await db.executeQuery(TO_PROCESS_RESULT(db, [outcome.result_oid, pid]));
  }
  await releaseEnded(scope, payloads, pid);
}
