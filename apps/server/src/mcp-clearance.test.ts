import { DEFAULT_SINK_RULES, type SinkRule } from '@libos/capabilities';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startServer, type Harness } from './internal/testing/harness.js';

let h: Harness;
let client: Client | null = null;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await client?.close();
  client = null;
  await h.stop();
});

async function mcpClient(pid: string): Promise<Client> {
  client = new Client({ name: 'libos-test', version: '0.0.0' });
  const url = new URL(`${h.server.url}/mcp/processes/${pid}`);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${h.server.token}` } } });
  await client.connect(transport);
  return client;
}

const textOf = (r: Record<string, unknown>): string => (r.content as { type: string; text: string }[])[0]!.text;

it('[K-8.3] a tools/call result reaches the MCP client (sink mcp:client) only when the process’s labels are cleared for it', async () => {
  const p = await h.rt.spawn({ goal: 'x' });
  await h.rt.activateSkill(p.pid, 'agent-libos-object-memory');
  const mcp = await mcpClient(p.pid);
  expect((await mcp.callTool({ name: 'list_memory_namespace', arguments: {} })).isError).toBeFalsy();

  const secret = { type: 'observation', name: 'k', payload: { code: 'hunter2' }, metadata: { sensitivity: 'confidential' } };
  const made = await h.rt.call(p.pid, 'create_memory_object', secret);
  expect(made.ok).toBe(true);
  const read = await mcp.callTool({ name: 'read_memory_object', arguments: { name: 'k' } });
  expect(read.isError).toBe(true);
  expect(textOf(read)).not.toContain('hunter2');
  const refusal = JSON.parse(textOf(read));
  expect(refusal).toMatchObject({ code: 'egress_denied', details: { sink: 'mcp:client', rule: null } });
  expect(refusal.details.labels).toMatchObject({ sensitivity: 'confidential' });
  // The call ran (a read has no effect to undo); only its result was withheld from the client.
  const calls = await h.rt.audit({ pid: p.pid, action: 'tool.call' });
  expect(calls.filter((c) => c.target === 'tool:read_memory_object').map((c) => c.decision)).toEqual(['ok']);

  // A host rule that clears mcp:client for confidential data lets the same result through.
  const rule: SinkRule = { pattern: 'mcp:client', trustLevel: 'trusted', maxSensitivity: 'confidential', tenants: '*', principals: '*' };
  const rules = [...DEFAULT_SINK_RULES, rule];
  await h.rt.transaction((scope) => h.rt.authority.setSinkRules(scope, 'host', rules));
  const cleared = await mcp.callTool({ name: 'read_memory_object', arguments: { name: 'k' } });
  expect(cleared.isError).toBeFalsy();
  expect(textOf(cleared)).toContain('hunter2');
});
