// The record of one Object as the objects service returns it: its fields, metadata, provenance, owner and lifecycle.
import type { DataLabels } from '@libos/sdk';

/** Lifecycle of an Object row. */
export type LifecycleState = 'live' | 'payload_unavailable' | 'superseded' | 'released';

/** Who owns an Object. */
export type OwnerKind = 'process' | 'process_result' | 'object_task' | 'runtime';

/** Descriptive metadata stored with an Object (labels are stored apart). */
export interface ObjectMetadata {
  readonly title: string | null;
  readonly summary: string | null;
  readonly tags: readonly string[];
  readonly mime_type: string | null;
  readonly retention_policy: string;
  /** Derived, advisory: max(1, ⌊code points of the canonical payload / 4⌋). */
  readonly token_estimate: number;
}

/** Where an Object came from. Runtime-controlled; a model only adds explicit parents. */
export interface Provenance {
  readonly created_from_action: string;
  readonly parent_oids: readonly string[];
  readonly source_refs: readonly string[];
  readonly source_operation_ids: readonly string[];
  /**
   * An earlier Object of the same process whose parents, in full, are parents of this one too (OM-77.3): a published
   * result names only what its process observed since its previous result. `inspect` returns provenance in full
   * (parents merged, without this field); a listing returns it as stored.
   */
  readonly parents_from?: string;
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
  /** The runtime instance whose memory holds the payload (null: written before instances were recorded). */
  readonly payloadInstance: string | null;
  /** Set by a read on another host of a shared store: the live host that holds the payload (it is not lost). */
  readonly heldBy?: string;
}
