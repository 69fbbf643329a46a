import { Hono } from 'hono';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Runtime, ToolCallResult } from '@libos/kernel';
import type { ServerContext } from './internal/server-context.js';

/** The MCP server name and version a client sees at initialize. */
export const MCP_SERVER_INFO = { name: 'libos', version: '0.1.0' } as const;

/** A broker envelope as an MCP tool result: the payload as JSON text, or `isError` with the error JSON as text. */
export function toCallToolResult(r: ToolCallResult): CallToolResult {
  if (!r.ok) return { isError: true, content: [{ type: 'text', text: JSON.stringify(r.error) }], _meta: { 'libos/call_id': r.call_id } };
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(r.payload ?? null) }];
  if (r.wait) content.push({ type: 'text', text: JSON.stringify({ wait: r.wait }) });
  if (r.notices?.length) content.push({ type: 'text', text: JSON.stringify({ notices: r.notices }) });
  return { content, _meta: { 'libos/call_id': r.call_id } };
}

/**
 * One MCP server bound to one process: `tools/list` is the process's visible tools (their JSON Schemas generated
 * from zod), `tools/call` is a broker call as that process, so its grants, budget and state decide.
 */
export function processMcpServer(rt: Runtime, pid: string): McpServer {
  const mcp = new McpServer(MCP_SERVER_INFO, { capabilities: { tools: {} } });
  // The tool table is the process's, read on every request: the low-level handlers take JSON Schemas as they are.
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await rt.toolSchemas(pid)).map((t): Tool => ({ name: t.name, description: t.description, inputSchema: t.input_schema as Tool['inputSchema'] })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (req) => toCallToolResult(await rt.call(pid, req.params.name, req.params.arguments ?? {})));
  return mcp;
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
export function mcpRoutes(ctx: ServerContext): Hono {
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
