import type { PayloadStore } from '../payload-store.js';

/** What every tool and service of one plugin instance shares. */
export interface ObjectMemoryDeps {
  readonly payloads: PayloadStore;
}
