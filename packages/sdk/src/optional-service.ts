import { LibosError } from './errors.js';
import type { ServiceScope } from './context.js';

/**
 * The service `name` bound to the scope's transaction when a loaded plugin provides it, else `undefined`: for a
 * service a plugin uses only when another plugin is there (Object Memory asks the tasks plugin's pins this way). A
 * scope without `hasService` (a test double) is asked for the service, and its `not_found` means none.
 *
 * @example
 * declare const scope: ServiceScope;
 * const pins = optionalService<{ pinned(oids: readonly string[]): Promise<ReadonlySet<string>> }>(scope, 'object_pins');
 * const pinned = pins ? await pins.pinned(['obj_1']) : new Set<string>();
 */
export function optionalService<T>(scope: Pick<ServiceScope, 'service' | 'hasService'>, name: string): T | undefined {
  if (scope.hasService) return scope.hasService(name) ? scope.service<T>(name) : undefined;
  try {
    return scope.service<T>(name);
  } catch (err) {
    if (err instanceof LibosError && err.code === 'not_found') return undefined;
    throw err;
  }
}
