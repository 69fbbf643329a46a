import { dirname } from 'node:path';
import type { Command } from 'commander';
import { importPluginSpecs, openRuntime, wire, type HostConfig, type LoadedPluginInfo, type Runtime } from '@libos/kernel';
import { connectMcpServers, mcpClientPlugin, mcpSkillName, type McpConnections } from '@libos/mcp-client';
import { standardPlugins } from '../compose.js';
import { print, table } from '../output.js';
import type { CommandKit } from './kit.js';
import { hostConfigOf } from './with-runtime.js';

/** One external MCP server of the host config, as `libos plugins` lists it. */
export interface McpServerRow {
  readonly name: string;
  /** The server's own version (from initialize) once connected, else null. */
  readonly version: string | null;
  readonly origin: 'mcp_server';
  readonly transport: 'stdio' | 'http';
  /** How it is reached: the command line of a stdio server, the URL of an HTTP one. */
  readonly spec: string;
  readonly skills: readonly string[];
  /** The libOS tool names (`mcp_<server>_<tool>`) once connected (`--connect`), else null: unknown without asking. */
  readonly tools: readonly string[] | null;
  /** The name and version the server gave at initialize (`--connect`), else null. */
  readonly server: { readonly name: string; readonly version: string } | null;
}

type HostMcpServers = HostConfig['mcp_servers'];

/** The plugin the servers' Skills and tools come from. */
const MCP_CLIENT_PLUGIN = '@libos/mcp-client';

function mcpRows(servers: HostMcpServers, rt: Runtime, mcp: McpConnections | null): McpServerRow[] {
  const catalog = rt.skillCatalog();
  return Object.entries(servers).map(([name, spec]) => {
    const conn = mcp?.servers.find((s) => s.name === name) ?? null;
    const skill = mcpSkillName(name);
    return {
      name,
      version: conn?.server?.version ?? null,
      origin: 'mcp_server',
      transport: spec.url !== undefined ? 'http' : 'stdio',
      spec: spec.url ?? [spec.command, ...(spec.args ?? [])].join(' '),
      skills: [skill],
      tools: conn ? (catalog.find((s) => s.skillId === skill)?.tools ?? []) : null,
      server: conn?.server ?? null,
    };
  });
}

function text(list: readonly LoadedPluginInfo[], servers: readonly McpServerRow[], connected: boolean): string {
  const rows = [
    ...list.map((p) => ({
      plugin: p.name,
      version: p.version,
      origin: p.origin === 'host' ? 'standard' : p.origin,
      from: p.spec,
      skills: p.skills.join(' ') || null,
      tools: p.tools,
    })),
    ...servers.map((s) => ({
      plugin: s.name,
      version: s.version,
      origin: `mcp_server (${s.transport})`,
      from: s.spec,
      skills: s.skills.join(' '),
      tools: s.tools ? s.tools.length : '?',
    })),
  ];
  const lines = [table(rows, ['plugin', 'version', 'origin', 'from', 'skills', 'tools'])];
  if (servers.length && !connected) {
    lines.push(`MCP servers are listed from the host config, not contacted: libos plugins --connect starts them and lists their tools`);
  }
  for (const s of servers) if (s.tools) lines.push(`${s.name}: ${s.tools.join(' ') || '(no tools)'}`);
  return lines.join('\n');
}

/**
 * `libos plugins`: what a command loads, with versions: the kernel's own plugins, the standard ones, those named by
 * `--plugin` and by the host config's `plugins` (in load order), each checked as `openRuntime` checks it; then the
 * external MCP servers of the config's `mcp_servers` (name, transport, how they are reached, their Skill). Those are
 * not contacted unless `--connect` is given, which starts (or reaches) each, lists its tools and closes it again
 * (an unreachable one is `mcp_server_unavailable`). It opens no store (an in-memory one only), so it works before
 * `libos init` and beside a running server.
 */
export function registerPlugins(program: Command, kit: CommandKit): void {
  program
    .command('plugins')
    .description(
      'list the plugins commands load (kernel, standard, --plugin, the config plugins key), with versions, and the config mcp_servers',
    )
    .option('--connect', "connect to the config's MCP servers to list their tools (stdio servers are started, then stopped)")
    .action(
      kit.act(async (cmd: Command, f: { connect?: boolean }) => {
        const o = kit.g(cmd);
        const specs = (cmd.optsWithGlobals() as { plugin?: string[] }).plugin ?? [];
        const loaded = hostConfigOf(o);
        const extra = await importPluginSpecs(specs, process.cwd());
        const servers = loaded.config.mcp_servers;
        const connect = f.connect === true && Object.keys(servers).length > 0;
        const mcp = connect ? await connectMcpServers(servers) : null;
        try {
          const rt = await openRuntime({
            path: ':memory:',
            plugins: [...standardPlugins(), ...extra, ...(mcp ? [mcpClientPlugin(mcp)] : [])],
            hostConfig: loaded.config,
            ...(loaded.path ? { pluginBaseDir: dirname(loaded.path) } : {}),
          });
          try {
            // The MCP servers' plugin is listed as its servers, one row each, connected or not.
            const list = rt.loadedPlugins().filter((p) => p.name !== MCP_CLIENT_PLUGIN);
            const rows = mcpRows(servers, rt, mcp);
            print(o, [...list.map(wire.pluginToWire), ...rows], () => text(list, rows, connect));
          } finally {
            await rt.close();
          }
        } finally {
          await mcp?.close();
        }
      }),
    );
}
