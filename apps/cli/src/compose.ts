import { dirname, resolve } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { checkpoints } from '@libos/checkpoints';
import {
  hostConfigForStore,
  importPluginSpecs,
  openRuntime,
  parseHostConfig,
  type HostConfigInput,
  type Runtime,
  type RuntimeConfig,
} from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { workspace } from '@libos/workspace';
import { openWithMcpServers } from './mcp-servers.js';

/** The standard plugin set: composition happens in the apps, nowhere else. */
export const standardPlugins = () => [capabilities(), objectMemory(), tasks(), session(), workspace(), checkpoints()];

/**
 * What the command line adds to every runtime it opens: the `--plugin` specs (resolved from the working folder) and
 * the `--config` file, whose folder the config's own `plugins` resolve from. program.ts sets it before each action.
 */
export interface CommandLinePlugins {
  readonly specs: readonly string[];
  readonly configPath?: string;
  readonly cwd: string;
  /** `--host-id` / `LIBOS_HOST_ID`: open a postgres:// store as this host of many (`openRuntime({ host })`). */
  readonly hostId?: string;
}

let commandLine: CommandLinePlugins = { specs: [], cwd: process.cwd() };

/** Sets the command line's plugin options for the runtimes this command opens. */
export function setCommandLinePlugins(options: CommandLinePlugins): void {
  commandLine = options;
}

/**
 * Opens the runtime on `db` with the standard plugins, then the `--plugin` ones, then those the host config names
 * (`config`: e.g. sequential ids for the demo). `hostConfig` is the `--config` file's; without it the runtime uses
 * the `libos.config.json|yaml` next to the store, if any.
 */
export async function openStandardRuntime(db: string, config?: RuntimeConfig, hostConfig?: HostConfigInput): Promise<Runtime> {
  const extra = await importPluginSpecs(commandLine.specs, commandLine.cwd);
  const pluginBaseDir = commandLine.configPath !== undefined ? dirname(resolve(commandLine.cwd, commandLine.configPath)) : undefined;
  // The config's external MCP servers are connected first; their tools join as one more plugin.
  const host = hostConfig !== undefined ? parseHostConfig(hostConfig) : hostConfigForStore(db).config;
  return openWithMcpServers(host, (mcp) =>
    openRuntime({
      path: db,
      plugins: [...standardPlugins(), ...extra, ...mcp],
      ...(config ? { config } : {}),
      ...(hostConfig ? { hostConfig } : {}),
      ...(pluginBaseDir !== undefined ? { pluginBaseDir } : {}),
      ...(commandLine.hostId !== undefined ? { host: { id: commandLine.hostId } } : {}),
    }),
  );
}
