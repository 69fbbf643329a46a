import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { canonicalJson, sha256Hex } from '@libos/sdk';
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
    expect(ask).toMatchObject({
      description: schemas.find((s) => s.name === 'ask_human')!.description,
      inputSchema: { type: 'object', properties: { question: expect.any(Object) } },
    });
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
    expect(JSON.parse(textOf(refused))).toMatchObject({
      code: 'permission_denied',
      category: 'permission_denied',
      message: expect.any(String),
    });
    expect(await h.rt.processes()).toHaveLength(1);

    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(JSON.parse(textOf(unknown))).toMatchObject({ code: 'tool_not_in_process_table' });
    const invalid = await client.callTool({ name: 'get_current_time', arguments: { timezone: 42 } });
    expect(invalid.isError).toBe(true);
    expect(JSON.parse(textOf(invalid))).toMatchObject({ category: 'invalid_argument' });
  });

  it('[K-8.5] capabilities are stated truthfully: tools without listChanged (the stateless endpoint cannot notify)', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const client = await mcpClient(p.pid);
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
  });

  it('needs the bearer token; an unknown pid is 404; GET is 405 (stateless endpoint)', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    await expect(mcpClient(p.pid, null)).rejects.toMatchObject({ code: 401, message: expect.stringContaining('missing bearer token') });
    await expect(mcpClient(p.pid, `${h.server.token}x`)).rejects.toMatchObject({
      code: 401,
      message: expect.stringContaining('wrong bearer token'),
    });
    await expect(mcpClient('pid_0000000000000000')).rejects.toMatchObject({
      code: 404,
      message: expect.stringContaining('process_not_found'),
    });
    const get = await fetch(`${h.server.url}/mcp/processes/${p.pid}`, {
      headers: { authorization: `Bearer ${h.server.token}`, accept: 'text/event-stream' },
    });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  });
});

describe('MCP high-risk confirmation', () => {
  /** The refusal an unconfirmed high-risk tools/call gets: isError, the confirmation_required JSON as text. */
  const refusalOf = (r: Record<string, unknown>) => {
    expect(r.isError).toBe(true);
    return JSON.parse(textOf(r));
  };

  it('[K-53] tools/call process_exit without _confirmed is refused, audited, and the process lives; with it, it exits', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const before = await h.rt.process(p.pid);
    const client = await mcpClient(p.pid);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'process_exit')!.inputSchema.properties).toMatchObject({ _confirmed: { type: 'boolean' } });
    expect(tools.find((t) => t.name === 'get_current_time')!.inputSchema.properties).not.toHaveProperty('_confirmed');

    for (const args of [{ message: 'done' }, { message: 'done', _confirmed: false }]) {
      const refused = refusalOf(await client.callTool({ name: 'process_exit', arguments: args }));
      expect(refused).toEqual({
        confirmation_required: true,
        action: 'tool:process_exit',
        preview: { pid: p.pid, tool: 'process_exit', args: { message: 'done' } },
        error: {
          code: 'conflict',
          category: 'conflict',
          message: expect.stringContaining('"_confirmed": true'),
          details: { confirmation_required: true, action: 'tool:process_exit', confirm_with: { _confirmed: true } },
        },
      });
    }
    expect(await h.rt.process(p.pid)).toEqual(before);
    expect(await h.rt.events({ pid: p.pid, type: 'tool_called' })).toEqual([]);
    const audit = await h.rt.audit({ action: 'gui.confirmation_required' });
    expect(audit).toHaveLength(2);
    expect(audit[0]).toMatchObject({
      actor: 'host',
      target: `process:${p.pid}`,
      decision: 'confirmation_required',
      details: { via: 'mcp', action: 'tool:process_exit', pid: p.pid, args_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(JSON.stringify(audit[0]!.details)).not.toContain('done');

    const exited = await client.callTool({ name: 'process_exit', arguments: { message: 'done', _confirmed: true } });
    expect(exited.isError).toBeFalsy();
    expect((await h.rt.process(p.pid)).status).toBe('exited');
  });

  it('[K-53] exec_process and a child cancel/terminate need _confirmed too, a pause not; _confirmed never reaches the broker', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const child = await h.rt.spawn({ goal: 'child', parentPid: p.pid });
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    await h.rt.activateSkill(p.pid, 'agent-libos-agent-images');
    const client = await mcpClient(p.pid);
    const before = await h.rt.process(p.pid);
    for (const [name, args] of [
      ['exec_process', { image: 'base-agent:v0' }],
      ['signal_child_process', { child_pid: child.pid, signal: 'terminate' }],
      ['signal_child_process', { child_pid: child.pid, signal: 'cancel' }],
    ] as const) {
      const refused = refusalOf(await client.callTool({ name, arguments: args }));
      const seen = { name, action: refused.action, preview: refused.preview };
      expect(seen).toEqual({ name, action: `tool:${name}`, preview: { pid: p.pid, tool: name, args } });
    }
    expect(await h.rt.audit({ action: 'gui.confirmation_required' })).toHaveLength(3);
    expect(await h.rt.process(p.pid)).toEqual(before);
    expect((await h.rt.process(child.pid)).status).toBe('runnable');

    // A pause is not high-risk; `_confirmed` on it (or on any tool) is stripped, not passed to the tool.
    const signal = (sig: string) => ({ name: 'signal_child_process', arguments: { child_pid: child.pid, signal: sig, _confirmed: true } });
    const paused = await client.callTool(signal('pause'));
    expect(paused.isError).toBeFalsy();
    expect((await h.rt.process(child.pid)).status).toBe('paused');
    const [pauseAudit] = await h.rt.audit({ action: 'tool.call' });
    expect(pauseAudit!.details).toMatchObject({ args_sha256: sha256Hex(canonicalJson({ child_pid: child.pid, signal: 'pause' })) });
    const killed = await client.callTool(signal('terminate'));
    expect(killed.isError).toBeFalsy();
    expect((await h.rt.process(child.pid)).status).toBe('killed');
    const execd = await client.callTool({ name: 'exec_process', arguments: { image: 'base-agent:v0', _confirmed: true } });
    expect(execd.isError).toBeFalsy();
    expect((await h.rt.process(p.pid)).stateGeneration).toBeGreaterThan(before.stateGeneration);
    expect(await h.rt.audit({ action: 'gui.confirmation_required' })).toHaveLength(3);
  });

  it('[K-53] a _confirmed that is not a boolean is isError invalid_arguments naming it, and nothing runs', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const before = await h.rt.process(p.pid);
    const client = await mcpClient(p.pid);
    const bad = await client.callTool({ name: 'process_exit', arguments: { _confirmed: 'yes' } });
    expect(bad.isError).toBe(true);
    const error = JSON.parse(textOf(bad));
    expect(error).toMatchObject({ code: 'invalid_arguments', details: { field: '_confirmed' } });
    expect(error.message).toContain('_confirmed: ');
    expect(await h.rt.process(p.pid)).toEqual(before);
    expect(await h.rt.events({ pid: p.pid, type: 'tool_called' })).toEqual([]);
  });
  it('[K-8.6] deep arguments over MCP are invalid_arguments naming the field before the confirmation gate walks them', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const before = await h.rt.process(p.pid);
    const client = await mcpClient(p.pid);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 3_000; i++) deep = { a: deep };
    for (const name of ['exec_process', 'process_exit']) {
      const r = await client.callTool({ name, arguments: { message: deep } });
      expect(r.isError).toBe(true);
      const error = JSON.parse(textOf(r));
      expect(error).toMatchObject({ code: 'invalid_arguments', details: { field: 'message', limit: 'depth', max: 100 } });
    }
    expect(await h.rt.process(p.pid)).toEqual(before);
    expect(await h.rt.audit({ action: 'gui.confirmation_required' })).toEqual([]);
  });
});
