import type { PayloadStore } from '../payload-store.js';
import type { ObservedChains } from './observed-chain.js';

/** What every tool and service of one plugin instance shares. */
export interface ObjectMemoryDeps {
  readonly payloads: PayloadStore;
  /** Per-process chains of observed sources (OM-77.3); without it every create writes its observed sources whole. */
  readonly chains?: ObservedChains;
}
