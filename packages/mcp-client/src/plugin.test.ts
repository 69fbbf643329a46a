import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { capabilities, DEFAULT_SINK_RULES } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { connectMcpServers, type McpConnections } from './connect.js';
import { mcpClientPlugin } from './plugin.js';

// The MCP client against a small external server the test starts (the official SDK's Server, over stdio or
// Streamable HTTP): its tools become the Skill mcp-weather, activated under skill:mcp-weather, each call authorised
// by mcp:weather/<tool> execute and audited like any tool.

const SERVER = fileURLToPath(new URL('./internal/testing/weather-mcp-server.mjs', import.meta.url));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function callLog(): { path: string; calls: () => { name: string; arguments: Record<string, unknown> }[] } {
  const dir = mkdtempSync(join(tmpdir(), 'libos-mcp-client-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'calls.jsonl');
  return {
    path,
    calls: () =>
      existsSync(path)
        ? readFileSync(path, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [],
  };
}

async function runtimeWith(mcp: McpConnections): Promise<Runtime> {
  const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), mcpClientPlugin(mcp)] });
  cleanups.push(async () => {
    await rt.close();
    await mcp.close();
  });
  return rt;
}

/** Starts the test server over Streamable HTTP in a child process; resolves with its URL. */
async function httpServer(env: Record<string, string>): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [SERVER, '--http'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => void child.kill());
  let out = '';
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    if (out.includes('\n')) break;
  }
  return (JSON.parse(out.split('\n')[0]!) as { url: string }).url;
}

describe('external MCP servers as a Skill', () => {
  it('[issue 12] stdio server: mcp-weather activated, its tool called with mcp:weather/forecast execute, refused without', async () => {
    const log = callLog();
    const mcp = await connectMcpServers({ weather: { command: process.execPath, args: [SERVER], env: { CALL_LOG: log.path } } });
    expect(mcp.servers.map((s) => ({ name: s.name, server: s.server, tools: s.tools.map((t) => t.name) }))).toEqual([
      { name: 'weather', server: { name: 'weather-test', version: '1.2.3' }, tools: ['forecast', 'outage'] },
    ]);
    const rt = await runtimeWith(mcp);
    expect(rt.skillCatalog().find((s) => s.skillId === 'mcp-weather')).toMatchObject({
      plugin: '@libos/mcp-client',
      tools: ['mcp_weather_forecast', 'mcp_weather_outage'],
    });
    const { pid } = await rt.spawn({ goal: 'check the weather' });

    // Activation is gated by skill:mcp-weather execute, then the server's tools join the process's table.
    expect(await rt.call(pid, 'activate_skill', { skill_id: 'mcp-weather' })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
    await rt.grant(pid, 'skill:mcp-weather', ['execute']);
    const activated = await rt.call(pid, 'activate_skill', { skill_id: 'mcp-weather' });
    expect(activated).toMatchObject({ ok: true, payload: { tool_names: ['mcp_weather_forecast', 'mcp_weather_outage'] } });
    const schema = (await rt.toolSchemas(pid)).find((t) => t.name === 'mcp_weather_forecast')!;
    expect(schema.description).toContain('needs execute on mcp:weather/forecast');
    expect(schema.inputSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });

    // Without the grant the call is refused before anything leaves: the server never hears of it.
    const refused = await rt.call(pid, 'mcp_weather_forecast', { city: 'Oslo' });
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'permission_denied', details: { resource: 'mcp:weather/forecast', right: 'execute' } },
    });
    expect(log.calls()).toEqual([]);

    await rt.grant(pid, 'mcp:weather/forecast', ['execute']);
    const ok = await rt.call(pid, 'mcp_weather_forecast', { city: 'Oslo', days: 3 });
    expect(ok).toMatchObject({
      ok: true,
      payload: {
        content: [{ type: 'text', text: 'Sunny in Oslo for 3 day(s)' }],
        structured_content: { city: 'Oslo', days: 3, sky: 'sunny' },
      },
    });
    expect(log.calls()).toEqual([{ name: 'forecast', arguments: { city: 'Oslo', days: 3 } }]);

    // Arguments are checked against the tool's own schema before they leave.
    expect(await rt.call(pid, 'mcp_weather_forecast', { days: 3 })).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(await rt.call(pid, 'mcp_weather_forecast', { city: 'Oslo', days: 9 })).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments' },
    });
    expect(log.calls()).toHaveLength(1);

    // The grant covers one tool: the other is refused; granted, its isError answer is mcp_tool_error with its text.
    expect(await rt.call(pid, 'mcp_weather_outage', {})).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await rt.grant(pid, 'mcp:weather/*', ['execute']);
    expect(await rt.call(pid, 'mcp_weather_outage', {})).toMatchObject({
      ok: false,
      error: {
        code: 'mcp_tool_error',
        category: 'conflict',
        message: 'mcp server weather: outage answered with an error: the weather service is down',
      },
    });

    // Audited like any tool: one tool.call record per call, with its decision.
    const audited = (await rt.audit({ pid, action: 'tool.call' })).filter((a) => a.target?.startsWith('tool:mcp_weather_'));
    expect(audited.map((a) => [a.target, a.decision])).toEqual([
      ['tool:mcp_weather_forecast', 'permission_denied'],
      ['tool:mcp_weather_forecast', 'ok'],
      ['tool:mcp_weather_forecast', 'invalid_arguments'],
      ['tool:mcp_weather_forecast', 'invalid_arguments'],
      ['tool:mcp_weather_outage', 'permission_denied'],
      ['tool:mcp_weather_outage', 'mcp_tool_error'],
    ]);
  });

  it('[K-59] arguments leave through the sink mcp:<server>/<tool>: refused after confidential data, sent once cleared', async () => {
    const log = callLog();
    const mcp = await connectMcpServers({ weather: { command: process.execPath, args: [SERVER], env: { CALL_LOG: log.path } } });
    const rt = await runtimeWith(mcp);
    const { pid } = await rt.spawn({ goal: 'check the weather after reading a confidential note' });
    await rt.grant(pid, 'skill:mcp-weather', ['execute']);
    await rt.grant(pid, 'mcp:weather/*', ['execute']);
    expect(await rt.call(pid, 'activate_skill', { skill_id: 'mcp-weather' })).toMatchObject({ ok: true });
    // The process has read confidential data: whatever it writes next may carry it.
    await rt.transaction((scope) => rt.authority.flow(scope, pid).taint({ sensitivity: 'confidential', tenant: 'acme' }));

    // An unmatched sink is untrusted (normal data at most): the call is refused and nothing reaches the server.
    const refused = await rt.call(pid, 'mcp_weather_forecast', { city: 'Oslo' });
    expect(refused).toMatchObject({
      ok: false,
      error: {
        code: 'egress_denied',
        category: 'permission_denied',
        details: { field: 'arguments', sink: 'mcp:weather/forecast', rule: null },
      },
    });
    const message = (refused as { error: { message: string } }).error.message;
    expect(message).toMatch(/may not send confidential \(tenant acme\) data to mcp:weather\/forecast/);
    expect(log.calls()).toEqual([]);

    // The host clears the server's tools up to confidential: the same call goes through. The grant alone never did.
    const rule = {
      pattern: 'mcp:weather/*',
      trustLevel: 'trusted',
      maxSensitivity: 'confidential',
      tenants: ['acme'],
      principals: '*',
    } as const;
    await rt.transaction((scope) => rt.authority.setSinkRules(scope, 'host', [...DEFAULT_SINK_RULES, rule]));
    expect(await rt.call(pid, 'mcp_weather_forecast', { city: 'Oslo' })).toMatchObject({
      ok: true,
      payload: { structured_content: { city: 'Oslo' } },
    });
    expect(log.calls()).toEqual([{ name: 'forecast', arguments: { city: 'Oslo' } }]);
    const cleared = await rt.audit({ action: 'data_flow.decision' });
    expect(cleared.at(-1)).toMatchObject({ target: 'mcp:weather/forecast', decision: 'allow' });

    // Clearance has a ceiling: after secret data the cleared server is refused again.
    await rt.transaction((scope) => rt.authority.flow(scope, pid).taint({ sensitivity: 'secret' }));
    expect(await rt.call(pid, 'mcp_weather_forecast', { city: 'Lima' })).toMatchObject({ ok: false, error: { code: 'egress_denied' } });
    expect(log.calls()).toHaveLength(1);
  });

  it('a Streamable HTTP server works the same way', async () => {
    const log = callLog();
    const url = await httpServer({ CALL_LOG: log.path });
    const mcp = await connectMcpServers({ 'weather-http': { url } });
    const rt = await runtimeWith(mcp);
    const { pid } = await rt.spawn({ goal: 'check the weather over HTTP' });
    await rt.grant(pid, 'skill:mcp-weather-http', ['execute']);
    await rt.grant(pid, 'mcp:weather-http/forecast', ['execute']);
    expect(await rt.call(pid, 'activate_skill', { skill_id: 'mcp-weather-http' })).toMatchObject({ ok: true });
    expect(await rt.call(pid, 'mcp_weather_http_forecast', { city: 'Lima' })).toMatchObject({
      ok: true,
      payload: { structured_content: { city: 'Lima', days: 1 } },
    });
    expect(log.calls()).toEqual([{ name: 'forecast', arguments: { city: 'Lima' } }]);
  });

  it('a server that cannot be started is mcp_server_unavailable naming it, with its last stderr lines; the others are closed', async () => {
    const broken = { command: process.execPath, args: ['-e', 'process.stderr.write("no weather today\\n"); process.exit(3)'] };
    const err = await connectMcpServers({ weather: { command: process.execPath, args: [SERVER] }, broken }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'mcp_server_unavailable', category: 'unavailable', details: { server: 'broken' } });
    expect((err as Error).message).toMatch(/^mcp server broken \(.*\): cannot connect and list its tools: .*no weather today/);
  });
});
