import type { Kysely } from 'kysely';

export type { LifecycleState, OwnerKind } from '../object-record.js';

/** `om_namespaces`: one row per namespace. Metadata is JSON text, never interpreted. */
export interface NamespaceTable {
  namespace: string;
  parent_namespace: string | null;
  metadata: string;
  created_by: string;
  created_at: string;
  updated_at: string;
}

/** `om_objects`: Object metadata. `payload` holds only the runtime-memory marker, never content. */
export interface ObjectTable {
  oid: string;
  namespace: string;
  name: string;
  type: string;
  schema_version: string;
  version: number;
  immutable: number;
  metadata: string;
  labels: string;
  provenance: string;
  payload: string;
  owner_kind: string;
  owner_id: string;
  lifecycle_state: string;
  created_by: string;
  created_at: string;
  updated_at: string;
  /** Monotonic write sequence: breaks ties between equal timestamps in newest-first orders. */
  updated_seq: number;
  deleted_at: string | null;
  /** The runtime instance holding the payload in its memory (`ServiceScope.runtime`); null before 0005. */
  payload_instance: string | null;
}

/** `om_views`: one MemoryView per process. */
export interface ViewTable {
  view_id: string;
  owner_pid: string;
  mode: string;
  filters: string;
  rights_policy: string;
  created_from: string;
  created_at: string;
}

/** `om_view_roots`: ordered root handles of a view. */
export interface ViewRootTable {
  view_id: string;
  oid: string;
  position: number;
  capability_id: string | null;
}

/** `om_links`: `src -relation-> dst` between two Objects. */
export interface LinkTable {
  link_id: string;
  src_oid: string;
  dst_oid: string;
  relation: string;
  metadata: string;
  created_at: string;
}

export interface OmDatabase {
  om_namespaces: NamespaceTable;
  om_objects: ObjectTable;
  om_views: ViewTable;
  om_view_roots: ViewRootTable;
  om_links: LinkTable;
}

export type OmDb = Kysely<OmDatabase>;

/** The store transaction of a scope, typed for this plugin's tables. */
export const omDb = (store: unknown): OmDb => store as OmDb;

/** Payload column of a row whose payload is cached in runtime memory. */
export const PAYLOAD_PRESENT_MARKER = JSON.stringify({ storage: 'runtime_memory', present: true });
/** Payload column of a row whose payload was lost when the Runtime reopened. */
export const PAYLOAD_LOST_MARKER = JSON.stringify({ storage: 'runtime_memory', present: false, recovered_after_reopen: true });
