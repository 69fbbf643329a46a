import { capabilities } from '@libos/capabilities';
import { checkpoints } from '@libos/checkpoints';
import { openRuntime, type HostConfigInput, type Runtime, type RuntimeConfig } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { workspace } from '@libos/workspace';

/** The standard plugin set: composition happens in the apps, nowhere else. */
export const standardPlugins = () => [capabilities(), objectMemory(), tasks(), session(), workspace(), checkpoints()];

/**
 * Opens the runtime on `db` with the standard plugins (`config`: e.g. sequential ids for the demo). `hostConfig` is
 * the `--config` file's; without it the runtime uses the `libos.config.json|yaml` next to the store, if any.
 */
export function openStandardRuntime(db: string, config?: RuntimeConfig, hostConfig?: HostConfigInput): Promise<Runtime> {
  return openRuntime({ path: db, plugins: standardPlugins(), ...(config ? { config } : {}), ...(hostConfig ? { hostConfig } : {}) });
}
