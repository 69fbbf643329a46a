import { definePlugin, LibosError, skillFromFile, systemClock, type Plugin } from '@libos/sdk';
import { createAuthorityEngine } from './engine.js';
import { CAPABILITY_SERVICE_NAME } from './service.js';
import { delegateCapability } from './tools/delegate-capability.js';
import { listCapabilities } from './tools/list-capabilities.js';
import { requestPermission } from './tools/request-permission.js';
import { revokeCapability } from './tools/revoke-capability.js';
import { VERSION } from './version.js';

/** The authority tools, in Skill order. */
export const AUTHORITY_TOOLS = Object.freeze([listCapabilities, requestPermission, delegateCapability, revokeCapability]);

/**
 * The `@libos/capabilities` Skill plugin: the authority Skill and its tools, the engine's migrations and the
 * `capabilities` service. The kernel runs the authority engine itself, with the runtime's clock and ids
 * (`openRuntime({ clock, ids })`), so the plugin takes no options: an `engine`, `clock` or `ids` passed here could not
 * take effect and is refused with `invalid_arguments` instead of being ignored.
 *
 * @example
 * import { systemClock } from '@libos/sdk';
 * openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory()], config: { clock: systemClock } });
 */
export function capabilities(options: Readonly<Record<string, never>> = {}): Plugin {
  const given = Object.keys(options ?? {});
  if (given.length > 0) {
    const names = given.map((k) => JSON.stringify(k)).join(', ');
    const why = "the kernel runs the authority engine with the runtime's clock and ids (pass them to openRuntime)";
    throw new LibosError('invalid_arguments', `capabilities(): option ${names} is not accepted; ${why}`, {
      details: { field: given[0], accepted: [] },
    });
  }
  const engine = createAuthorityEngine({ clock: systemClock });
  return definePlugin({
    name: '@libos/capabilities',
    version: VERSION,
    skills: [skillFromFile(new URL('../skills/agent-libos-authority/SKILL.md', import.meta.url))],
    tools: AUTHORITY_TOOLS,
    migrations: engine.migrations,
    services: { [CAPABILITY_SERVICE_NAME]: (scope) => engine.service(scope) },
  });
}
