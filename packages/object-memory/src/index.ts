export { objectMemory, type ObjectMemoryOptions, type ObjectMemoryPlugin } from './plugin.js';
export { createPayloadStore, type PayloadStore } from './payload-store.js';
export type {
  ObjectDescription,
  ObjectMemoryService,
  ObjectRenderedView,
  ObjectViewManifestEntry,
  ViewFilter,
  ViewMode,
} from './objects-service.js';
export type { LifecycleState, ObjectMetadata, ObjectRecord, OwnerKind, Provenance } from './object-record.js';
export { OBJECT_TYPES, type ObjectType } from './object-types.js';
export { MAX_ENTRY_SIZE, MAX_PAYLOAD_SIZE, LIST_LIMITS, READ_LIMITS } from './bounds.js';
