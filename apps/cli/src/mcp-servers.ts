import type { HostConfig, Runtime } from '@libos/kernel';
import { connectMcpServers, mcpClientPlugin } from '@libos/mcp-client';
import type { Plugin } from '@libos/sdk';

/**
 * Opens a runtime with the host config's external MCP servers: each is connected (stdio servers started) and listed
 * before the store is opened, and their tools join as the `@libos/mcp-client` plugin (a Skill `mcp-<server>` each).
 * A server that cannot be reached fails the command with `mcp_server_unavailable` naming it, and nothing is opened.
 * Closing the runtime closes the connections (stdio servers stop). Without `mcp_servers`, nothing is started.
 *
 * @example
 * const rt = await openWithMcpServers(config, (extra) => openRuntime({ path, plugins: [...standardPlugins(), ...extra] }));
 */
export async function openWithMcpServers(host: HostConfig, open: (plugins: readonly Plugin[]) => Promise<Runtime>): Promise<Runtime> {
  if (Object.keys(host.mcp_servers).length === 0) return open([]);
  const mcp = await connectMcpServers(host.mcp_servers);
  let rt: Runtime;
  try {
    rt = await open([mcpClientPlugin(mcp)]);
  } catch (err) {
    await mcp.close();
    throw err;
  }
  const closeRuntime = rt.close.bind(rt);
  rt.close = async () => {
    try {
      await closeRuntime();
    } finally {
      await mcp.close();
    }
  };
  return rt;
}
