import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type Harness } from './internal/testing/harness.js';

let h: Harness;
const clients: Client[] = [];
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await h.stop();
});

async function mcpClient(pid: string, token: string | null = h.server.token): Promise<Client> {
  const client = new Client({ name: 'libos-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${h.server.url}/mcp/processes/${pid}`), {
    requestInit: { headers: token === null ? {} : { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The first text content of a tools/call result. */
function textOf(r: Record<string, unknown>): string {
  const [first] = r.content as { type: string; text: string }[];
  expect(first!.type).toBe('text');
  return first!.text;
}

describe('MCP endpoint /mcp/processes/:pid', () => {
  it("tools/list is the process's visible tools with the JSON Schemas a model is shown", async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    const client = await mcpClient(p.pid);
    expect(client.getServerVersion()).toMatchObject({ name: 'libos' });
    const { tools } = await client.listTools();
    const schemas = await h.rt.toolSchemas(p.pid);
    expect(tools.map((t) => t.name)).toEqual(schemas.map((s) => s.name));
    expect(tools.map((t) => t.name)).toContain('ask_human');
    const ask = tools.find((t) => t.name === 'ask_human')!;
    expect(ask).toMatchObject({ description: schemas.find((s) => s.name === 'ask_human')!.description, inputSchema: { type: 'object', properties: { question: expect.any(Object) } } });
  });

  it('tools/call goes through the broker: a granted call succeeds, a refused one is isError with the error JSON', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    await h.rt.grant(p.pid, 'clock:now', ['read']);
    const client = await mcpClient(p.pid);

    const ok = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(ok.isError).toBeFalsy();
    expect(JSON.parse(textOf(ok))).toMatchObject({ timezone: expect.any(String) });
    expect(await h.rt.events({ pid: p.pid, type: 'tool_completed' })).toHaveLength(1);

    // Visible is not authority: spawning a child needs process:spawn write, which this process lacks.
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    const refused = await client.callTool({ name: 'spawn_child_process', arguments: { goal: 'a child' } });
    expect(refused.isError).toBe(true);
    expect(JSON.parse(textOf(refused))).toMatchObject({ code: 'permission_denied', category: 'permission_denied', message: expect.any(String) });
    expect(await h.rt.processes()).toHaveLength(1);

    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(JSON.parse(textOf(unknown))).toMatchObject({ code: 'tool_not_in_process_table' });
    const invalid = await client.callTool({ name: 'get_current_time', arguments: { timezone: 42 } });
    expect(invalid.isError).toBe(true);
    expect(JSON.parse(textOf(invalid))).toMatchObject({ category: 'invalid_argument' });
  });

  it('needs the bearer token; an unknown pid is 404; GET is 405 (stateless endpoint)', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    await expect(mcpClient(p.pid, null)).rejects.toMatchObject({ code: 401, message: expect.stringContaining('missing bearer token') });
    await expect(mcpClient(p.pid, `${h.server.token}x`)).rejects.toMatchObject({ code: 401, message: expect.stringContaining('wrong bearer token') });
    await expect(mcpClient('pid_0000000000000000')).rejects.toMatchObject({ code: 404, message: expect.stringContaining('process_not_found') });
    const get = await fetch(`${h.server.url}/mcp/processes/${p.pid}`, { headers: { authorization: `Bearer ${h.server.token}`, accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });
});
