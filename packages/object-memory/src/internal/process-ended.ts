import type { EmittedEvent, ServiceScope } from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';
import { releaseEnded } from './release.js';
import type { OmDb } from './schema.js';

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
    await (scope.store as OmDb)
      .updateTable('om_objects')
      .set({ owner_kind: 'process_result' })
      .where('oid', '=', outcome.result_oid)
      .where('owner_id', '=', pid)
      .where('owner_kind', '=', 'process')
      .execute();
  }
  await releaseEnded(scope, payloads, pid);
}
