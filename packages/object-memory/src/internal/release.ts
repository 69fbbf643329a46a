import {
  LibosError,
  SERVICE_NAMES,
  type ObjectPinsService,
  type ProcessService,
  type ServiceScope,
  type SubtreeStateService,
} from '@libos/sdk';
import { isTerminalProcessStatus, optionalService, preparedQuery, resources } from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';
import { PAYLOAD_LOST_MARKER, type OmDb } from './schema.js';

async function statusOf(processes: ProcessService, pid: string): Promise<{ status: string; parentPid: string | null } | null> {
  try {
    const p = await processes.get(pid);
    return { status: p.status, parentPid: p.parentPid };
  } catch (err) {
    if (err instanceof LibosError && err.code === 'process_not_found') return null;
    throw err;
  }
}

/** The pinned subset of `oids` (none when no plugin pins Objects). */
async function pinnedOf(scope: ServiceScope, oids: readonly string[]): Promise<ReadonlySet<string>> {
  const pins = optionalService<ObjectPinsService>(scope, SERVICE_NAMES.objectPins);
  return pins ? pins.pinned(oids) : new Set();
}

/** One Object's release, and a process's owned live Objects: compiled once per store (every process's end asks). */
const RELEASE_OBJECT = preparedQuery(2, (db: OmDb, [at, oid]) =>
  db
    .updateTable('om_objects')
    .set({ lifecycle_state: 'released', payload: PAYLOAD_LOST_MARKER, deleted_at: at!, updated_at: at! })
    .where('oid', '=', oid!),
);
/** The live Objects the processes `pids` own, oldest first. */
const liveOwnedBy = (db: OmDb, pids: readonly string[]) =>
  db
    .selectFrom('om_objects')
    .select('oid')
    .where('owner_kind', '=', 'process')
    .where('owner_id', 'in', pids)
    .where('lifecycle_state', 'in', ['live', 'payload_unavailable'])
    .orderBy('created_at')
    .orderBy('oid');
const LIVE_OWNED_BY_ONE = preparedQuery(1, (db: OmDb, [pid]) => liveOwnedBy(db, [pid!]));

/**
 * Releases Objects in the scope's transaction: lifecycle `released` (the name is free again, reads find nothing),
 * the runtime-local payload dropped (put back if the transaction rolls back), one `object_released` event each.
 */
export async function releaseObjects(scope: ServiceScope, payloads: PayloadStore, oids: readonly string[], reason: string): Promise<void> {
  const db = scope.store as OmDb;
  const at = scope.clock.now().toISOString();
  for (const oid of oids) {
    await db.executeQuery(RELEASE_OBJECT(db, [at, oid]));
    if (payloads.has(oid)) {
      const previous = payloads.get(oid);
      payloads.delete(oid);
      scope.onRollback(() => payloads.set(oid, previous));
    }
    await scope.events.emit('object_released', { oid, reason });
  }
}

/**
 * The merge of an ended process's memory (`ObjectsService.releaseEnded`): once `pid` has ended and nobody can merge
 * it any more (it is a root, or its parent ended too), the process-owned Objects of `pid` and of its ended descendants
 * are released, except those an active task pins. Exit results (`process_result`) and task-owned results stay.
 */
export async function releaseEnded(scope: ServiceScope, payloads: PayloadStore, pid: string): Promise<string[]> {
  const processes = scope.service<ProcessService>(SERVICE_NAMES.processes);
  const me = await statusOf(processes, pid);
  if (!me || !isTerminalProcessStatus(me.status)) return [];
  if (me.parentPid !== null) {
    const parent = await statusOf(processes, me.parentPid);
    if (parent && !isTerminalProcessStatus(parent.status)) return [];
  }
  const tree = await scope.service<SubtreeStateService>(SERVICE_NAMES.subtreeState).subtree(pid);
  const ended: string[] = [];
  for (const p of tree.pids) if (isTerminalProcessStatus((await statusOf(processes, p))?.status ?? 'exited')) ended.push(p);
  const db = scope.store as OmDb;
  const owned: string[] = [];
  if (ended.length === 1) owned.push(...(await db.executeQuery(LIVE_OWNED_BY_ONE(db, ended))).rows.map((r) => r.oid));
  else
    for (let i = 0; i < ended.length; i += 500) {
      const rows = await liveOwnedBy(db, ended.slice(i, i + 500)).execute();
      owned.push(...rows.map((r) => r.oid));
    }
  if (owned.length === 0) return [];
  const pinned = await pinnedOf(scope, owned);
  const released = owned.filter((o) => !pinned.has(o));
  if (released.length === 0) return [];
  await releaseObjects(scope, payloads, released, `process ${pid} ended`);
  await scope.audit.record({
    action: 'object.release_ended',
    target: resources.process(pid),
    decision: 'released',
    details: { pids: ended, released: released.length, oids: released.slice(0, 100), pinned: [...pinned].slice(0, 100) },
  });
  return released;
}
