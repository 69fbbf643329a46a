import type { DataLabels } from '@libos/sdk';
import type { ObjectMetadata } from './metadata.js';
import type { LifecycleState, NamespaceTable, ObjectTable, OwnerKind } from './schema.js';

/** Where an Object came from. Runtime-controlled; a model only adds explicit parents. */
export interface Provenance {
  readonly created_from_action: string;
  readonly parent_oids: readonly string[];
  readonly source_refs: readonly string[];
  readonly source_operation_ids: readonly string[];
}

/** An Object row with its JSON columns parsed. */
export interface ObjectRecord {
  readonly oid: string;
  readonly namespace: string;
  readonly name: string;
  readonly type: string;
  readonly version: number;
  readonly immutable: boolean;
  readonly metadata: ObjectMetadata;
  readonly labels: DataLabels;
  readonly provenance: Provenance;
  readonly ownerKind: OwnerKind;
  readonly ownerId: string;
  readonly lifecycle: LifecycleState;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly updatedSeq: number;
}

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
