import { Hono } from 'hono';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime, RuntimeEvent, ToolCallResult } from '@libos/kernel';
import { assertJsonBounds, isLibosError } from '@libos/sdk';
import { checkConfirmation, confirmableInputSchema, takeMcpConfirmation } from './internal/confirmation.js';
import { clearForMcpClient } from './internal/mcp-result-clearance.js';
import type { ServerContext } from './internal/server-context.js';
import { VERSION } from './version.js';

/** The MCP server name and version a client sees at initialize. */
export const MCP_SERVER_INFO = { name: 'libos', version: VERSION } as const;

/** A broker envelope as an MCP tool result: the payload as JSON text, or `isError` with the error JSON as text. */
export function toCallToolResult(r: ToolCallResult): CallToolResult {
  if (!r.ok) return { isError: true, content: [{ type: 'text', text: JSON.stringify(r.error) }], _meta: { 'libos/call_id': r.call_id } };
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(r.payload ?? null) }];
  if (r.wait) content.push({ type: 'text', text: JSON.stringify({ wait: r.wait }) });
  if (r.notices?.length) content.push({ type: 'text', text: JSON.stringify({ notices: r.notices }) });
  return { content, _meta: { 'libos/call_id': r.call_id } };
}

/**
 * One tools/call as the process: the confirmation gate first (`_confirmed` is taken off the arguments; a high-risk
 * call without it is refused, audited, with the confirmation_required JSON as `isError` text), then the broker.
 */
async function callAsProcess(rt: Runtime, pid: string, name: string, raw: Record<string, unknown>): Promise<CallToolResult> {
  let taken: ReturnType<typeof takeMcpConfirmation>;
  try {
    taken = takeMcpConfirmation(raw);
    // The host path's JSON bounds, before anything (the confirmation gate included) walks the arguments.
    for (const [field, value] of Object.entries(taken.args)) if (value !== undefined) assertJsonBounds(value, field);
  } catch (err) {
    if (!isLibosError(err)) throw err;
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(err.toJSON()) }] };
  }
  const refusal = await checkConfirmation(rt, { via: 'mcp', pid, tool: name, args: taken.args, confirmed: taken.confirmed });
  if (refusal) return { isError: true, content: [{ type: 'text', text: JSON.stringify(refusal) }] };
  // The result leaves for an external client: it is handed over only if cleared for the sink `mcp:client`.
  return toCallToolResult(await clearForMcpClient(rt, pid, await rt.call(pid, name, taken.args)));
}

export interface ProcessMcpOptions {
  /**
   * Declare `tools.listChanged` and deliver it: a `notifications/tools/list_changed` whenever the process's visible
   * tools change (a Skill loaded or unloaded, an exec). Only for a session that lives as long as its transport (stdio);
   * the stateless HTTP endpoint cannot notify, so it leaves this off.
   */
  readonly listChanged?: boolean;
}

/**
 * One MCP server bound to one process: `tools/list` is the process's visible tools (their JSON Schemas generated
 * from zod; high-risk tools also list `_confirmed`), `tools/call` is a broker call as that process, so its grants,
 * budget and state decide. Capabilities: tools, with `listChanged` only when `opts.listChanged` (then delivered).
 *
 * @example
 * const mcp = processMcpServer(rt, pid, { listChanged: true });
 * await mcp.connect(new StdioServerTransport());
 */
export function processMcpServer(rt: Runtime, pid: string, opts: ProcessMcpOptions = {}): McpServer {
  const mcp = new McpServer(MCP_SERVER_INFO);
  // Declared here, not in the constructor options: McpServer would add `listChanged: true` there.
  mcp.server.registerCapabilities({ tools: opts.listChanged ? { listChanged: true } : {} });
  if (opts.listChanged) notifyToolListChanges(rt, pid, mcp);
  // The tool table is the process's, read on every request: the low-level handlers take JSON Schemas as they are.
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await rt.toolSchemas(pid)).map((t): Tool => {
      const inputSchema = confirmableInputSchema(t.name, t.inputSchema) as Tool['inputSchema'];
      return { name: t.name, description: t.description, inputSchema };
    }),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (req) => callAsProcess(rt, pid, req.params.name, req.params.arguments ?? {}));
  return mcp;
}

/** Sends `tools/list_changed` when an event of `pid` leaves its visible tools different; stops when the server closes. */
function notifyToolListChanges(rt: Runtime, pid: string, mcp: McpServer): void {
  let last: string | null = null;
  const visible = async () => (await rt.process(pid)).visibleTools.join('\n');
  const onEvent = (e: RuntimeEvent) => {
    if (e.pid !== pid) return;
    void visible()
      .then((now) => {
        last ??= now;
        if (now === last) return;
        last = now;
        if (mcp.isConnected()) mcp.sendToolListChanged();
      })
      .catch(() => unwatch()); // the runtime closed: nothing more to watch
  };
  void visible().then(
    (now) => (last ??= now),
    () => undefined,
  );
  const unwatch = rt.watch({ event: onEvent });
  const previous = mcp.server.onclose;
  mcp.server.onclose = () => {
    unwatch();
    previous?.();
  };
}

const methodNotAllowed = {
  jsonrpc: '2.0',
  error: { code: -32000, message: 'Method not allowed: this endpoint is stateless (POST only; no session, no server-initiated stream)' },
  id: null,
} as const;

/**
 * `POST /mcp/processes/:pid`: an MCP Streamable HTTP endpoint (stateless, JSON responses) exposing the process's
 * tool table; a fresh server and transport serve each request. GET and DELETE are 405 (no sessions). 404 for an
 * unknown pid. Bearer auth applies as on every route.
 */
export function mcpRoutes(ctx: ServerContext) {
  const { rt } = ctx;
  return new Hono()
    .post('/processes/:pid', async (c) => {
      const pid = c.req.param('pid');
      await rt.process(pid);
      const mcp = processMcpServer(rt, pid);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await mcp.connect(transport);
      try {
        return await transport.handleRequest(c.req.raw);
      } finally {
        await mcp.close();
      }
    })
    .on(['GET', 'DELETE'], '/processes/:pid', (c) => c.json(methodNotAllowed, 405, { allow: 'POST' }));
}
