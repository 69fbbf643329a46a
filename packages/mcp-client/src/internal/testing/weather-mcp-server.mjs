#!/usr/bin/env node
// A small external MCP server for the tests, built with the official SDK's low-level Server: tools `forecast`
// (city, days?) and `outage` (always answers isError). Each tools/call it receives is appended to $CALL_LOG (one
// JSON line), so a test can prove a refused call never reached it. Over stdio by default; with --http it serves
// Streamable HTTP (stateless) on 127.0.0.1 and prints {"url": ...} as its first line.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TOOLS = [
  {
    name: 'forecast',
    description: 'The weather forecast for a city.',
    inputSchema: {
      type: 'object',
      properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city'],
    },
  },
  { name: 'outage', description: 'Always fails: the weather service is down.', inputSchema: { type: 'object', properties: {} } },
];

function weatherServer() {
  const server = new Server({ name: 'weather-test', version: '1.2.3' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    if (process.env.CALL_LOG) appendFileSync(process.env.CALL_LOG, `${JSON.stringify(req.params)}\n`);
    const { name, arguments: args = {} } = req.params;
    if (name === 'forecast') {
      const days = args.days ?? 1;
      return {
        content: [{ type: 'text', text: `Sunny in ${args.city} for ${days} day(s)` }],
        structuredContent: { city: args.city, days, sky: 'sunny' },
      };
    }
    if (name === 'outage') return { isError: true, content: [{ type: 'text', text: 'the weather service is down' }] };
    return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
  });
  return server;
}

if (process.argv.includes('--http')) {
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const server = weatherServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  http.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${http.address().port}/mcp` })}\n`));
} else {
  await weatherServer().connect(new StdioServerTransport());
}
