import type { Command } from 'commander';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { MCP_SERVER_INFO, processMcpServer } from '@libos/server';
import { EXIT, UsageError } from '../output.js';
import { remoteHost } from '../served/remote-host.js';
import { findServedStore, type ServedStore } from '../served/served-file.js';
import type { CommandKit } from './kit.js';
import { withLocalRuntime } from './with-runtime.js';

/** Resolves when the client goes away (stdin ends) or the process is told to stop. */
function untilStdinEnds(transport: StdioServerTransport): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.stdin.off('end', done);
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.stdin.once('end', done);
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
    const previous = transport.onclose;
    transport.onclose = () => {
      previous?.();
      done();
    };
  });
}

/**
 * A served store: a stdio MCP server that forwards `tools/list` and `tools/call` to the server's Streamable HTTP
 * endpoint for the process (the same tool mapping, confirmation gate and sink clearance); no `listChanged`, since
 * that endpoint cannot notify.
 */
async function bridge(served: ServedStore, pid: string): Promise<void> {
  await (await remoteHost(served)).process(pid);
  const upstream = new Client({ name: 'libos-mcp-bridge', version: MCP_SERVER_INFO.version });
  const url = new URL(`${served.url}/mcp/processes/${encodeURIComponent(pid)}`);
  await upstream.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${served.token}` } } }));
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (req) => upstream.listTools(req.params));
  server.setRequestHandler(CallToolRequestSchema, (req) => upstream.callTool(req.params));
  const transport = new StdioServerTransport();
  await server.connect(transport);
  try {
    await untilStdinEnds(transport);
  } finally {
    await server.close();
    await upstream.close();
  }
}

/**
 * `libos mcp --pid <pid>`: an MCP server on stdin/stdout (what desktop MCP clients start) exposing one process's
 * tools: `tools/list` is its visible tools, `tools/call` a broker call as that process (its grants decide; high-risk
 * tools take `_confirmed: true`). On a store nobody serves it opens the store itself (and notifies `tools/list_changed`
 * when the process's tools change); on a served store it forwards to the server. It runs until stdin closes.
 * Nothing but MCP messages is written to stdout; errors go to stderr.
 */
export function registerMcp(program: Command, kit: CommandKit): void {
  program
    .command('mcp')
    .description("serve one process's tools to an MCP client over stdio (for desktop MCP clients); runs until stdin closes")
    .option('--pid <pid>', 'the process whose tools the client sees and calls as (required)')
    .action(
      kit.act(async (cmd: Command, f: { pid?: string }) => {
        const o = kit.g(cmd);
        if (!f.pid) throw new UsageError('mcp: --pid <pid> is required (the process the client acts as)');
        const pid = f.pid;
        const served = findServedStore(o.db);
        if (served) {
          await bridge(served, pid);
          return EXIT.ok;
        }
        await withLocalRuntime(o, async (rt) => {
          await rt.process(pid);
          const mcp = processMcpServer(rt, pid, { listChanged: true });
          const transport = new StdioServerTransport();
          await mcp.connect(transport);
          try {
            await untilStdinEnds(transport);
          } finally {
            await mcp.close();
          }
        });
        return EXIT.ok;
      }),
    );
}
