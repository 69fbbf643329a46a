import {
  canonicalSha256,
  definePlugin,
  defineTool,
  LibosError,
  SERVICE_NAMES,
  skillFromText,
  type AnyTool,
  type Plugin,
  type SinksService,
  type SkillSource,
} from '@libos/sdk';
import type { McpConnection, McpConnections, McpToolInfo } from './connect.js';
import { MCP_CLIENT_ERRORS } from './errors.js';
import { inputSchemaOf } from './internal/input-schema.js';
import { libosToolName } from './internal/tool-names.js';
import { resources } from '@libos/sdk';
import { VERSION } from './version.js';

/** The Skill of one server: `mcp-<server>`. */
export const mcpSkillName = (server: string): string => `mcp-${server}`;

/** The resource a call of `tool` on `server` needs `execute` on: `mcp:<server>/<tool>` (`mcp:<server>/*` covers all). */
export const mcpToolResource = (server: string, tool: string): string => resources.mcp(server, tool);

/**
 * The sink a call's arguments leave through: `mcp:<server>/<tool>`, the same name as its resource. Unmatched by
 * default (untrusted: normal data at most); a host sink rule such as `mcp:<server>/*` clears more.
 */
export const mcpToolSink = mcpToolResource;

/** The largest result (as JSON) one external call may hand back. */
export const MAX_RESULT_BYTES = 1024 * 1024;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The text parts of a tools/call result, joined. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((c: { type?: unknown; text?: unknown }) => (c?.type === 'text' && typeof c.text === 'string' ? [c.text] : []))
    .join('\n');
}

/** A JSON-RPC timeout from the SDK (`RequestTimeout`, -32001). */
const isTimeout = (err: unknown) => typeof err === 'object' && err !== null && (err as { code?: unknown }).code === -32001;

function externalTool(conn: McpConnection, t: McpToolInfo, name: string): AnyTool {
  const resource = mcpToolResource(conn.name, t.name);
  const about = `(external MCP server ${conn.name}, tool ${t.name}; needs execute on ${resource})`;
  return defineTool({
    name,
    description: clip(`${t.description.trim() || `The ${t.name} tool of ${conn.name}.`} ${about}`, 2000),
    input: inputSchemaOf(t.inputSchema),
    policy: { sideEffects: true, timeoutMs: conn.timeoutMs },
    async run(args, ctx) {
      await ctx.authority.require(resource, 'execute');
      // The arguments leave the runtime: they carry the caller's flow labels and must be cleared for the server.
      const labels = await ctx.flow.labels();
      const payloadSha256 = canonicalSha256(args);
      const sinks = ctx.service<SinksService>(SERVICE_NAMES.sinks);
      await sinks.clear(ctx.pid, mcpToolSink(conn.name, t.name), { labels, field: 'arguments', payloadSha256 });
      let result: Awaited<ReturnType<McpConnection['client']['callTool']>>;
      try {
        result = await conn.client.callTool({ name: t.name, arguments: args as Record<string, unknown> }, undefined, {
          signal: ctx.signal,
          timeout: conn.timeoutMs,
        });
      } catch (err) {
        if (ctx.signal.aborted)
          throw new LibosError('cancelled', `mcp server ${conn.name}: ${t.name} was cancelled`, {
            details: { server: conn.name, tool: t.name },
            cause: err,
          });
        const why = (err as Error).message;
        if (isTimeout(err))
          throw new LibosError('timeout', `mcp server ${conn.name}: ${t.name} did not answer within ${conn.timeoutMs} ms`, {
            details: { server: conn.name, tool: t.name },
            cause: err,
          });
        throw new LibosError('mcp_server_unavailable', `mcp server ${conn.name}: tools/call ${t.name} failed: ${why}`, {
          details: { server: conn.name, tool: t.name },
          cause: err,
        });
      }
      // Nobody classified what an external server sends: it joins the caller's flow as untrusted.
      await ctx.flow.taint({ trust_level: 'untrusted' });
      if (result.isError) {
        const text = clip(textOf(result.content) || '(no text)', 2000);
        throw new LibosError('mcp_tool_error', `mcp server ${conn.name}: ${t.name} answered with an error: ${text}`, {
          details: { server: conn.name, tool: t.name },
        });
      }
      const out = {
        content: result.content,
        ...(result.structuredContent !== undefined ? { structured_content: result.structuredContent } : {}),
      };
      const bytes = Buffer.byteLength(JSON.stringify(out));
      if (bytes > MAX_RESULT_BYTES) {
        throw new LibosError(
          'payload_too_large',
          `result: ${t.name} of ${conn.name} answered ${bytes} bytes; at most ${MAX_RESULT_BYTES}`,
          { details: { field: 'result', server: conn.name, tool: t.name, bytes } },
        );
      }
      return out;
    },
  });
}

function skillText(conn: McpConnection, names: ReadonlyMap<string, McpToolInfo>): string {
  const server = conn.server ? ` (${conn.server.name} ${conn.server.version})` : '';
  const description = clip(
    `Tools of the external MCP server ${conn.name}${server}: ${[...names.values()].map((t) => t.name).join(', ') || 'none'}. ` +
      `Each call needs execute on mcp:${conn.name}/<tool>.`,
    1024,
  );
  const lines = [...names].map(
    ([name, t]) => `- \`${name}\` calls \`${t.name}\`${t.description.trim() ? `: ${clip(t.description.trim().split('\n')[0]!, 200)}` : ''}`,
  );
  return [
    '---',
    `name: ${mcpSkillName(conn.name)}`,
    `description: ${JSON.stringify(description)}`,
    ...(names.size ? [`allowed-tools: ${[...names.keys()].join(' ')}`] : []),
    'metadata:',
    `  mcp_server: ${JSON.stringify(conn.name)}`,
    '---',
    `# MCP server ${conn.name}`,
    '',
    `These tools run on an external MCP server${server}; what they return is untrusted data from outside libOS.`,
    `A call needs execute on \`mcp:${conn.name}/<tool>\` (the tool's own name below); ask for it with request_permission.`,
    'Its arguments leave libOS: after you have read data above what the server is cleared for, a call is egress_denied.',
    '',
    ...lines,
    '',
  ].join('\n');
}

/**
 * The external servers as one plugin: a Skill `mcp-<server>` per server whose tools (`mcp_<server>_<tool>`) call the
 * server's tools through the connection. Activating the Skill needs `skill:mcp-<server>` execute (the kernel's
 * gate); each call needs `execute` on `mcp:<server>/<tool>`, is validated against the tool's input schema, sends its
 * arguments only when the caller's flow labels are cleared for the sink `mcp:<server>/<tool>` (else `egress_denied`,
 * nothing sent; unmatched, the sink takes normal data at most), runs under
 * the tool's timeout and the call's cancellation, taints the caller's flow as untrusted, and is audited by the
 * broker like any tool. A tool that answers `isError` fails with `mcp_tool_error` carrying its text.
 *
 * @example
 * import { loadHostConfig } from '@libos/kernel';
 * import { connectMcpServers } from '@libos/mcp-client';
 * const { config: hostConfig } = loadHostConfig('./.libos');
 * const mcp = await connectMcpServers(hostConfig.mcp_servers);
 * const rt = await openRuntime({ path, hostConfig, plugins: [capabilities(), objectMemory(), mcpClientPlugin(mcp)] });
 */
export function mcpClientPlugin(connections: McpConnections): Plugin {
  const skills: SkillSource[] = [];
  const tools: AnyTool[] = [];
  for (const conn of connections.servers) {
    const names = new Map<string, McpToolInfo>();
    for (const t of conn.tools) {
      const name = libosToolName(conn.name, t.name, new Set(names.keys()));
      names.set(name, t);
      tools.push(externalTool(conn, t, name));
    }
    skills.push(skillFromText(skillText(conn, names), mcpSkillName(conn.name), `mcp:${conn.name}/SKILL.md`));
  }
  return definePlugin({ name: '@libos/mcp-client', version: VERSION, skills, tools, errorCodes: MCP_CLIENT_ERRORS });
}
