import { LibosError, type DataLabels, type ServiceScope } from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';
import type { JsonValue } from './json-value.js';
import { tokenEstimate, type ObjectMetadata, type ParsedMetadata } from './metadata.js';
import { insertObject, markSuperseded } from './object-repo.js';
import { creatorRights, rememberObjectOwner } from './object-owners.js';
import { writePayload } from './payload-writes.js';
import type { ObjectRecord, Provenance } from './records.js';
import { PAYLOAD_PRESENT_MARKER, type OmDb, type OwnerKind } from './schema.js';
import { attachNewRoot } from './view-repo.js';
import { resources } from '@libos/sdk';

/**
 * Throws `object_name_exists` when `holder` (the Object holding `name` in `namespace`, from `lookupName`) is live.
 * Returns a payload-unavailable holder (which a new Object supersedes), or null.
 */
export function requireFreeName(holder: ObjectRecord | null, namespace: string, name: string): ObjectRecord | null {
  if (holder !== null && holder.lifecycle === 'live') {
    throw new LibosError(
      'object_name_exists',
      `name: ${JSON.stringify(name)} is already taken in namespace ${JSON.stringify(namespace)}; list and read it, or choose a new name`,
      {
        details: { field: 'name', namespace, name },
      },
    );
  }
  return holder;
}

export interface StoreObjectInput {
  readonly oid: string;
  readonly namespace: string;
  readonly name: string;
  readonly type: string;
  /** The payload-unavailable Object that holds the name (from `requireFreeName`), superseded by this one; or null. */
  readonly holder: ObjectRecord | null;
  readonly payload: JsonValue;
  readonly immutable: boolean;
  readonly metadata: ParsedMetadata['descriptive'];
  readonly labels: DataLabels;
  readonly provenance: Provenance;
  /**
   * The parents the creator named and that were checked (live, readable): the audit names these and counts the
   * flow's observed sources (`observedSources`), which grow with everything the process read.
   */
  readonly checkedParents: readonly string[];
  /** How many Objects the creating flow observed (in provenance, in full or through `parents_from`). */
  readonly observedSources: number;
  readonly ownerKind: OwnerKind;
  readonly ownerId: string;
  readonly createdBy: string;
  /** Pid whose MemoryView gets the new handle as a root, or null. */
  readonly attachTo: string | null;
  /** Audit action, e.g. `object.create`. */
  readonly action: string;
}

/**
 * Claims the name (the caller checked it with `requireFreeName`; a payload-unavailable holder is superseded),
 * inserts the row with the present-marker, caches the payload (undone on rollback), grants the owner its handle,
 * attaches the handle to a view, and records the event and audit. All in the scope's transaction.
 */
export async function storeObject(
  scope: ServiceScope,
  payloads: PayloadStore,
  input: StoreObjectInput,
): Promise<{ readonly capabilityId: string }> {
  const db = scope.store as OmDb;
  const at = scope.clock.now().toISOString();
  const holder = input.holder;
  if (holder !== null) {
    await markSuperseded(db, holder.oid, at);
    await scope.events.emit('object_superseded', { oid: holder.oid, namespace: holder.namespace, name: holder.name, by: input.oid });
  }
  const metadata: ObjectMetadata = { ...input.metadata, token_estimate: tokenEstimate(input.payload) };
  await insertObject(db, {
    oid: input.oid,
    namespace: input.namespace,
    name: input.name,
    type: input.type,
    immutable: input.immutable,
    metadata,
    labels: input.labels,
    provenance: input.provenance,
    payloadMarker: PAYLOAD_PRESENT_MARKER,
    payloadInstance: scope.runtime?.instanceId ?? null,
    ownerKind: input.ownerKind,
    ownerId: input.ownerId,
    createdBy: input.createdBy,
    at,
  });
  writePayload(scope, payloads, input.oid, input.payload);
  rememberObjectOwner(scope, { oid: input.oid, ownerId: input.ownerId, immutable: input.immutable, createdAt: at });
  const capabilityId = await scope.authorityFor(input.ownerId).grantTrusted({
    subject: input.ownerId,
    resource: resources.object(input.oid),
    rights: creatorRights(input.immutable),
    ownership: true,
  });
  if (input.attachTo !== null) await attachNewRoot(db, input.attachTo, input.oid, capabilityId, input.action, at);
  await scope.events.emit('object_created', {
    oid: input.oid,
    namespace: input.namespace,
    name: input.name,
    type: input.type,
    version: 1,
    owner_id: input.ownerId,
  });
  await scope.audit.record({
    action: input.action,
    target: resources.object(input.oid),
    decision: 'allow',
    details: {
      namespace: input.namespace,
      name: input.name,
      type: input.type,
      immutable: input.immutable,
      parent_oids: input.checkedParents,
      observed_sources: input.observedSources,
      labels: input.labels,
    },
  });
  return { capabilityId };
}
