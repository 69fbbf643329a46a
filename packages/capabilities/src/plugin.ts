import { definePlugin, skillFromFile, systemClock, type Clock, type IdSource, type Plugin } from '@libos/sdk';
import { createAuthorityEngine, type AuthorityEngine } from './engine.js';
import { CAPABILITY_SERVICE_NAME } from './service.js';
import { delegateCapability } from './tools/delegate-capability.js';
import { listCapabilities } from './tools/list-capabilities.js';
import { requestPermission } from './tools/request-permission.js';
import { revokeCapability } from './tools/revoke-capability.js';

/** The authority tools, in Skill order. */
export const AUTHORITY_TOOLS = Object.freeze([listCapabilities, requestPermission, delegateCapability, revokeCapability]);

/**
 * The `@libos/capabilities` Skill plugin: the authority Skill, the engine's migrations and the
 * `capabilities` service. Pass the kernel's engine so both share one configuration; migration names are
 * the engine's, so a name-keyed runner applies them once.
 *
 * @example
 * const engine = createAuthorityEngine({ clock: systemClock });
 * openRuntime({ plugins: [capabilities({ engine }), objectMemory()] });
 */
export function capabilities(opts: { readonly engine?: AuthorityEngine; readonly clock?: Clock; readonly ids?: IdSource } = {}): Plugin {
  const engine = opts.engine ?? createAuthorityEngine({ clock: opts.clock ?? systemClock, ...(opts.ids ? { ids: opts.ids } : {}) });
  return definePlugin({
    name: '@libos/capabilities',
    version: '0.1.0',
    skills: [skillFromFile(new URL('../skills/agent-libos-authority/SKILL.md', import.meta.url))],
    tools: AUTHORITY_TOOLS,
    migrations: engine.migrations,
    services: { [CAPABILITY_SERVICE_NAME]: (scope) => engine.service(scope) },
  });
}
