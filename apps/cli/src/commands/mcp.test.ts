import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, expectRefused, libosOn, startLibos, tempStore } from '../testing/libos-bin.js';

// Issue 12, MCP everywhere: the official MCP client drives `libos mcp --pid P` over stdio (as a desktop client does),
// on a store of its own or bridged to a running `libos serve`; and an external MCP server named in the host config
// becomes a Skill the CLI's processes activate and call under mcp:<server>/<tool> grants.

beforeAll(() => assertBuilt());

const WEATHER_SERVER = fileURLToPath(
  new URL('../../../../packages/mcp-client/src/internal/testing/weather-mcp-server.mjs', import.meta.url),
);

const clients: Client[] = [];
const servers: ReturnType<typeof startLibos>[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) {
    s.child.kill('SIGINT');
    await s.exited;
  }
});

/** The official client, starting `libos --db <db> mcp --pid <pid>` as its server process. */
async function libosMcp(db: string, pid: string): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--db', db, 'mcp', '--pid', pid], stderr: 'pipe' });
  const client = new Client({ name: 'desktop-client-test', version: '0.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

const textOf = (r: unknown) => (r as { content: { type: string; text: string }[] }).content[0]!.text;

describe('libos mcp --pid P (stdio)', { timeout: 120_000 }, () => {
  it('[issue 12] the official MCP client lists and calls the tools over stdio; tools/list_changed follows an activation', async () => {
    const { db } = tempStore('libos-mcp-');
    const { json } = libosOn(db);
    const pid = json('spawn', '--goal', 'serve a desktop client').pid;
    json('grant', pid, 'clock:now', 'read');
    json('grant', pid, 'skill:agent-libos-child-processes', 'execute');
    const { client } = await libosMcp(db, pid);
    expect(client.getServerVersion()).toMatchObject({ name: 'libos' });
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_current_time', 'activate_skill', 'process_exit']));
    expect(names).not.toContain('ask_human');

    const now = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(now.isError).toBeFalsy();
    expect(JSON.parse(textOf(now))).toMatchObject({ timezone: 'UTC' });
    const refused = await client.callTool({ name: 'sleep', arguments: { seconds: 1 } });
    expect(refused.isError).toBe(true);
    expect(JSON.parse(textOf(refused))).toMatchObject({ code: 'permission_denied', details: { resource: 'clock:sleep' } });
    // High-risk tools need the confirmation argument, as on the HTTP endpoint.
    const exit = await client.callTool({ name: 'process_exit', arguments: { message: 'bye' } });
    expect(JSON.parse(textOf(exit))).toMatchObject({ confirmation_required: true, action: 'tool:process_exit' });

    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    expect((await client.callTool({ name: 'activate_skill', arguments: { skill_id: 'agent-libos-child-processes' } })).isError).toBeFalsy();
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ask_human');
    await clients.splice(0)[0]!.close();
    // The client went away: the store is free again, and holds what the calls did.
    expect(
      json('audit', '--pid', pid, '--action', 'tool.call').map((a: { target: string; decision: string }) => [a.target, a.decision]),
    ).toEqual([
      ['tool:get_current_time', 'ok'],
      ['tool:sleep', 'permission_denied'],
      ['tool:activate_skill', 'ok'],
    ]);
  });

  it('bridges to the server when the store is served: a grant made with libos grant meanwhile applies at once', async () => {
    const { db } = tempStore('libos-mcp-');
    const server = startLibos(db, ['serve']);
    servers.push(server);
    await server.waitFor('\n');
    const { json } = libosOn(db);
    const pid = json('spawn', '--goal', 'served desktop client').pid;
    const { client } = await libosMcp(db, pid);
    expect(client.getServerCapabilities()?.tools).toEqual({});
    const before = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(JSON.parse(textOf(before))).toMatchObject({ code: 'permission_denied' });
    json('grant', pid, 'clock:now', 'read');
    const after = await client.callTool({ name: 'get_current_time', arguments: {} });
    expect(JSON.parse(textOf(after))).toMatchObject({ timezone: 'UTC' });
  });

  it('refuses a missing --pid (exit 2) and an unknown pid (exit 1) before speaking MCP', () => {
    const { db } = tempStore('libos-mcp-');
    const { run, json } = libosOn(db);
    json('init');
    expectRefused(run('mcp'), 2, '--pid <pid> is required');
    expectRefused(run('mcp', '--pid', 'pid_0000000000000000'), 1, 'process_not_found');
  });
});

describe('external MCP servers from the host config', { timeout: 120_000 }, () => {
  it("[K-60] libos plugins lists the config's MCP servers without starting them; --connect lists their tools", () => {
    const { db } = tempStore('libos-mcp-');
    const log = join(dirname(db), 'calls.jsonl');
    const weather = { command: process.execPath, args: [WEATHER_SERVER], env: { CALL_LOG: log } };
    const config = join(dirname(db), 'servers.json');
    writeFileSync(config, JSON.stringify({ mcp_servers: { weather, docs: { url: 'http://127.0.0.1:9/mcp' } } }));
    const { json, run } = libosOn(db);
    type Row = { name: string; origin: string };
    const listed = (json('--config', config, 'plugins') as Row[]).filter((p) => p.origin === 'mcp_server');
    expect(listed).toEqual([
      {
        name: 'weather',
        version: null,
        origin: 'mcp_server',
        transport: 'stdio',
        spec: `${process.execPath} ${WEATHER_SERVER}`,
        skills: ['mcp-weather'],
        tools: null,
        server: null,
      },
      {
        name: 'docs',
        version: null,
        origin: 'mcp_server',
        transport: 'http',
        spec: 'http://127.0.0.1:9/mcp',
        skills: ['mcp-docs'],
        tools: null,
        server: null,
      },
    ]);
    // Nothing was contacted: the docs address has no server, and the listing worked anyway (no store was created).
    const text = run('--config', config, 'plugins');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/weather\s+-\s+mcp_server \(stdio\)\s+\S+node\S* \S+weather-mcp-server\.mjs\s+mcp-weather\s+\?/);
    expect(text.stdout).toMatch(/docs\s+-\s+mcp_server \(http\)\s+http:\/\/127\.0\.0\.1:9\/mcp\s+mcp-docs\s+\?/);
    expect(text.stdout).toContain('libos plugins --connect starts them and lists their tools');

    // --connect reaches each server (an unreachable one fails naming it); a reachable one shows its tools and version.
    expectRefused(run('--config', config, 'plugins', '--connect'), 1, 'mcp_server_unavailable: mcp server docs');
    writeFileSync(config, JSON.stringify({ mcp_servers: { weather } }));
    expect((json('--config', config, 'plugins', '--connect') as Row[]).filter((p) => p.origin === 'mcp_server')).toEqual([
      expect.objectContaining({
        name: 'weather',
        version: '1.2.3',
        tools: ['mcp_weather_forecast', 'mcp_weather_outage'],
        server: { name: 'weather-test', version: '1.2.3' },
      }),
    ]);
    expect(run('--config', config, 'plugins', '--connect').stdout).toContain('weather: mcp_weather_forecast mcp_weather_outage');
    expect(json('--config', config, 'plugins').map((p: Row) => p.name)).not.toContain('@libos/mcp-client');
  });

  it('[issue 12] mcp_servers: a process activates mcp-weather, calls its tool with the grant, is refused without it', async () => {
    const { db } = tempStore('libos-mcp-');
    const log = join(dirname(db), 'calls.jsonl');
    const config = { mcp_servers: { weather: { command: process.execPath, args: [WEATHER_SERVER], env: { CALL_LOG: log } } } };
    writeFileSync(join(dirname(db), 'libos.config.json'), JSON.stringify(config));
    const { json, run } = libosOn(db);
    json('init');
    expect(json('skills').find((s: { skill_id: string }) => s.skill_id === 'mcp-weather')).toMatchObject({
      tools: ['mcp_weather_forecast', 'mcp_weather_outage'],
    });
    const pid = json('spawn', '--goal', 'check the weather').pid;
    json('grant', pid, 'skill:mcp-weather', 'execute');
    expect(json('call', pid, 'activate_skill', '{"skill_id": "mcp-weather"}')).toMatchObject({
      ok: true,
      payload: { tool_names: ['mcp_weather_forecast', 'mcp_weather_outage'] },
    });

    const refused = run('call', pid, 'mcp_weather_forecast', '{"city": "Oslo"}');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      ok: false,
      error: { code: 'permission_denied', details: { resource: 'mcp:weather/forecast' } },
    });
    json('grant', pid, 'mcp:weather/forecast', 'execute');
    expect(json('call', pid, 'mcp_weather_forecast', '{"city": "Oslo", "days": 2}')).toMatchObject({
      ok: true,
      payload: { content: [{ type: 'text', text: 'Sunny in Oslo for 2 day(s)' }] },
    });
    expect(
      json('audit', '--pid', pid, '--action', 'tool.call')
        .slice(-2)
        .map((a: { target: string; decision: string }) => [a.target, a.decision]),
    ).toEqual([
      ['tool:mcp_weather_forecast', 'permission_denied'],
      ['tool:mcp_weather_forecast', 'ok'],
    ]);

    // A server that cannot start fails the command naming it, and the store is not opened.
    writeFileSync(
      join(dirname(db), 'libos.config.json'),
      JSON.stringify({ mcp_servers: { weather: { command: join(dirname(db), 'no-such-program') } } }),
    );
    expectRefused(run('ps'), 1, 'mcp_server_unavailable: mcp server weather');
  });
});
