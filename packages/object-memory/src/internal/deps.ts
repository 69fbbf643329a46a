import type { PayloadStore } from '../payload-store.js';

/**
 * Fault-injection seams for tests of the conflict paths (never needed in production).
 */
export interface ObjectMemoryTestHooks {
  /** Runs inside append, after the new state is computed and before the conditional write, in the same transaction. */
  beforeAppendWrite?(event: { readonly store: unknown; readonly oid: string; readonly version: number }): Promise<void> | void;
  /** Runs inside append after the row and the runtime-local payload are written, before the call commits. */
  afterAppendWrite?(event: { readonly store: unknown; readonly oid: string; readonly version: number }): Promise<void> | void;
}

/** What every tool and service of one plugin instance shares. */
export interface ObjectMemoryDeps {
  readonly payloads: PayloadStore;
  readonly testHooks: ObjectMemoryTestHooks;
}
