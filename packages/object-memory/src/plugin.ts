import { definePlugin, skillFromFile, SERVICE_NAMES, type Plugin } from '@libos/sdk';
import { processEnded } from './internal/process-ended.js';
import { objectsState } from './internal/subtree-state.js';
import type { ObjectMemoryDeps } from './internal/deps.js';
import { migrations } from './internal/migrations.js';
import { objectOwners } from './internal/object-owners.js';
import { createObjectsService } from './objects-service.js';
import { createPayloadStore, type PayloadStore } from './payload-store.js';
import { appendMemoryObjectTool } from './tools/append-memory-object.js';
import { createMemoryNamespace } from './tools/create-memory-namespace.js';
import { createMemoryObjectTool } from './tools/create-memory-object.js';
import { listMemoryNamespaceTool } from './tools/list-memory-namespace.js';
import { readMemoryObjectTool } from './tools/read-memory-object.js';
import { VERSION } from './version.js';
import { ObservedChains } from './internal/observed-chain.js';

export interface ObjectMemoryOptions {
  /** Where payloads live (default: a fresh in-memory store owned by this plugin instance). */
  readonly payloadStore?: PayloadStore;
}

/** The plugin instance with its payload store exposed (checkpoints capture payloads through it). */
export type ObjectMemoryPlugin = Plugin & { readonly payloadStore: PayloadStore };

/**
 * The Object Memory plugin: the `agent-libos-object-memory` Skill, its five tools, the `om_*` tables, the
 * `objects` service, the owners of `object:<oid>` (an owner's rights derive from ownership), its share of checkpoints
 * (`subtreeState`) and the release of an ended process's memory (`process_exited`). No open hook: the reopen sweep is
 * lazy (`lazy-sweep.ts`). Each call creates an instance with its own runtime-local payload store.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory()] });
 */
export function objectMemory(options: ObjectMemoryOptions = {}): ObjectMemoryPlugin {
  const deps: ObjectMemoryDeps = { payloads: options.payloadStore ?? createPayloadStore(), chains: new ObservedChains() };
  const plugin = definePlugin({
    name: '@libos/object-memory',
    version: VERSION,
    skills: [skillFromFile(new URL('../skills/agent-libos-object-memory/SKILL.md', import.meta.url))],
    tools: [
      createMemoryNamespace,
      listMemoryNamespaceTool(deps),
      createMemoryObjectTool(deps),
      readMemoryObjectTool(deps),
      appendMemoryObjectTool(deps),
    ],
    migrations,
    services: { [SERVICE_NAMES.objects]: (scope) => createObjectsService(scope, deps) },
    owners: [objectOwners],
    subtreeState: objectsState(deps.payloads),
    // An ended process's exit result is kept as `process_result`; its memory is merged (released) once nobody else can.
    hooks: { events: { process_exited: (scope, event) => processEnded(scope, deps.payloads, event) } },
  });
  return Object.freeze({ ...plugin, payloadStore: deps.payloads });
}
