import { capabilities } from '@libos/capabilities';
import { checkpoints } from '@libos/checkpoints';
import { hostConfigForStore, openRuntime, parseHostConfig, type HostConfigInput, type Runtime, type RuntimeConfig } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { workspace } from '@libos/workspace';
import { openWithMcpServers } from './mcp-servers.js';

/** The standard plugin set: composition happens in the apps, nowhere else. */
export const standardPlugins = () => [capabilities(), objectMemory(), tasks(), session(), workspace(), checkpoints()];

/**
 * Opens the runtime on `db` with the standard plugins (`config`: e.g. sequential ids for the demo). `hostConfig` is
 * the `--config` file's; without it the runtime uses the `libos.config.json|yaml` next to the store, if any.
 */
export function openStandardRuntime(db: string, config?: RuntimeConfig, hostConfig?: HostConfigInput): Promise<Runtime> {
  // The config's external MCP servers are connected first; their tools join as one more plugin.
  const host = hostConfig !== undefined ? parseHostConfig(hostConfig) : hostConfigForStore(db).config;
  return openWithMcpServers(host, (mcp) =>
    openRuntime({ path: db, plugins: [...standardPlugins(), ...mcp], ...(config ? { config } : {}), ...(hostConfig ? { hostConfig } : {}) }),
  );
}
