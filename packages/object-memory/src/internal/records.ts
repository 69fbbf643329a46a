import type { DataLabels } from '@libos/sdk';
import type { LifecycleState, ObjectMetadata, ObjectRecord, OwnerKind, Provenance } from '../object-record.js';
import type { NamespaceTable, ObjectTable } from './schema.js';

export type { ObjectRecord, Provenance } from '../object-record.js';

export function objectFromRow(row: ObjectTable): ObjectRecord {
  return {
    oid: row.oid,
    namespace: row.namespace,
    name: row.name,
    type: row.type,
    version: Number(row.version),
    immutable: Number(row.immutable) === 1,
    metadata: JSON.parse(row.metadata) as ObjectMetadata,
    labels: JSON.parse(row.labels) as DataLabels,
    provenance: JSON.parse(row.provenance) as Provenance,
    ownerKind: row.owner_kind as OwnerKind,
    ownerId: row.owner_id,
    lifecycle: row.lifecycle_state as LifecycleState,
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    updatedSeq: Number(row.updated_seq),
    payloadInstance: row.payload_instance ?? null,
  };
}

/** A namespace row with its metadata parsed. */
export interface NamespaceRecord {
  readonly namespace: string;
  readonly parentNamespace: string | null;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly createdBy: string;
  readonly createdAt: string;
}

export function namespaceFromRow(row: NamespaceTable): NamespaceRecord {
  return {
    namespace: row.namespace,
    parentNamespace: row.parent_namespace,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
}
