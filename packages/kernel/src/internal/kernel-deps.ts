import type { AuthorityEngine } from '@libos/capabilities';
import type { Clock, IdSource } from '@libos/sdk';
import type { HostConfig } from '../config/host-config.js';
import type { EventBus } from '../events/event-bus.js';
import type { CommittedTexts } from '../executor/committed-texts.js';
import type { SeenTexts } from '../executor/prompt-texts.js';
import type { TreeOwnership } from '../hosts/shared-host.js';
import type { Registry } from '../plugins/registry.js';
import type { ScopeFactory } from '../store/transaction.js';
import type { KernelStore } from '../store/kernel-database.js';

/** What kernel modules share: the store, the registry, the authority engine, the scope factory. */
export interface KernelDeps {
  readonly db: KernelStore;
  readonly registry: Registry;
  readonly engine: AuthorityEngine;
  readonly scopes: ScopeFactory;
  readonly clock: Clock;
  readonly ids: IdSource;
  readonly bus: EventBus;
  /** The validated host config (defaults filled in): context policy, LLM profiles, clock and sleep settings. */
  readonly hostConfig: HostConfig;
  /** One of many hosts on a shared store: the trees it may run (absent: one host runs every process). */
  readonly trees?: TreeOwnership;
  /** The prompt texts this runtime sent before (K-9.10: stored inline the first time; absent: always by key). */
  readonly seenTexts?: SeenTexts;
  /** The prompt texts committed transactions of this runtime stored (K-15.28; absent: every text is sent). */
  readonly committedTexts?: CommittedTexts;
  /** The store defers guarded writes to the unit's next round trip (`OpenedStore.defersGuards`, K-15.23). */
  readonly defersGuards?: boolean;
}
