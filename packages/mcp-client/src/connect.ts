import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LibosError } from '@libos/sdk';
import { MCP_CLIENT_ERRORS } from './errors.js';
import { VERSION } from './version.js';

/** What `Client.connect` takes: either transport below. */
type Transport = Parameters<Client['connect']>[0];

/**
 * One external MCP server, as the host config's `mcp_servers` entry gives it: a program started and spoken to over
 * stdio (`command`, `args`, `env` added to a minimal environment, `cwd`), or a Streamable HTTP endpoint (`url`,
 * `headers`). `timeout_seconds` bounds every request (default 60).
 *
 * @example
 * const weather: McpServerSpec = { command: 'node', args: ['./weather-mcp.js'] };
 */
export interface McpServerSpec {
  readonly command?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeout_seconds?: number;
}

/** A tool an external server lists: its own name, description and input JSON Schema. */
export interface McpToolInfo {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/**
 * What a connection exposes of the official SDK's `Client`: calling a tool, and closing. Structural, so this package's
 * declarations never load the SDK's own (which do not compile under moduleResolution node16 from CommonJS).
 */
export interface McpClientHandle {
  callTool(
    params: { readonly name: string; readonly arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: { readonly signal?: AbortSignal; readonly timeout?: number },
  ): Promise<Readonly<Record<string, unknown>>>;
  close(): Promise<void>;
}

/** One connected server: its client (the official SDK's), what it said at initialize, and its tools. */
export interface McpConnection {
  readonly name: string;
  readonly client: McpClientHandle;
  readonly server: { readonly name: string; readonly version: string } | null;
  readonly tools: readonly McpToolInfo[];
  /** Milliseconds each request may take. */
  readonly timeoutMs: number;
}

/** Every configured server, connected; `close()` ends them all (stdio servers are stopped). */
export interface McpConnections {
  readonly servers: readonly McpConnection[];
  close(): Promise<void>;
}

/** The client's name and version at initialize. */
export const MCP_CLIENT_INFO = { name: 'libos', version: VERSION } as const;

/** At most this many pages of tools/list are read from one server. */
const MAX_TOOL_PAGES = 100;
/** The last stderr bytes of a stdio server kept for an error message. */
const STDERR_TAIL = 2000;

function transportOf(spec: McpServerSpec, stderrTail: { text: string }): Transport {
  if (spec.url !== undefined) {
    return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: { ...spec.headers } } });
  }
  const t = new StdioClientTransport({
    command: spec.command!,
    args: [...(spec.args ?? [])],
    env: { ...getDefaultEnvironment(), ...spec.env },
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
    stderr: 'pipe',
  });
  t.stderr?.on('data', (chunk: Buffer) => {
    stderrTail.text = (stderrTail.text + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  return t;
}

async function connectOne(name: string, spec: McpServerSpec): Promise<McpConnection> {
  const timeoutMs = Math.round((spec.timeout_seconds ?? 60) * 1000);
  const stderrTail = { text: '' };
  const client = new Client(MCP_CLIENT_INFO);
  try {
    await client.connect(transportOf(spec, stderrTail), { timeout: timeoutMs });
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const r = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
      for (const t of r.tools) tools.push({ name: t.name, description: t.description ?? t.title ?? '', inputSchema: t.inputSchema });
      cursor = r.nextCursor;
      if (cursor === undefined) break;
    }
    const info = client.getServerVersion();
    return { name, client, server: info ? { name: info.name, version: info.version } : null, tools, timeoutMs };
  } catch (err) {
    await client.close().catch(() => undefined);
    const where = spec.url ?? [spec.command, ...(spec.args ?? [])].join(' ');
    const tail = stderrTail.text.trim() ? ` (its stderr: ${stderrTail.text.trim().split('\n').slice(-3).join(' | ')})` : '';
    const message = `mcp server ${name} (${where}): cannot connect and list its tools: ${(err as Error).message}${tail}`;
    throw new LibosError('mcp_server_unavailable', message, { details: { server: name }, cause: err });
  }
}

/**
 * Connects to every server with the official MCP SDK (in parallel) and lists its tools. If one fails, the others
 * are closed again and `mcp_server_unavailable` names the server, how it was reached and why (a stdio server's last
 * stderr lines included). Call `close()` when the runtime closes.
 *
 * @example
 * const mcp = await connectMcpServers({ weather: { command: 'node', args: ['weather-mcp.js'] } });
 * import { mcpClientPlugin } from '@libos/mcp-client';
 * const rt = await openRuntime({ path, plugins: [capabilities(), objectMemory(), mcpClientPlugin(mcp)] });
 * // ... later
 * await rt.close();
 * await mcp.close();
 */
export async function connectMcpServers(servers: Readonly<Record<string, McpServerSpec>>): Promise<McpConnections> {
  void MCP_CLIENT_ERRORS;
  const entries = Object.entries(servers);
  const settled = await Promise.allSettled(entries.map(([name, spec]) => connectOne(name, spec)));
  const ok = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  const close = async () => {
    await Promise.all(ok.map((c) => c.client.close().catch(() => undefined)));
  };
  if (failed) {
    await close();
    throw failed.reason;
  }
  return { servers: ok, close };
}
