import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { hostGuard } from './host-guard.js';
import { startServer, type Harness } from './internal/testing/harness.js';
import { rawRequest } from './internal/testing/raw-http.js';
import { openSse } from './internal/testing/sse-client.js';

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.stop();
});

const port = () => Number(new URL(h.server.url).port);
const auth = () => ({ authorization: `Bearer ${h.server.token}` });
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The REST, SSE and MCP requests every header check must cover; the REST one would end the process if it ran. */
function routes(pid: string) {
  return [
    { path: '/api/health' },
    { path: '/api/events/stream' },
    {
      path: `/api/processes/${pid}/call`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'process_exit', args: {}, confirmed: true }),
    },
    { path: `/mcp/processes/${pid}`, headers: MCP_HEADERS, body: initialize },
  ];
}

describe('Host and Origin guard (DNS rebinding)', () => {
  it('[K-8.5] a foreign Host is 403 naming the header on REST, SSE and /mcp, and nothing runs', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const other = port() === 65_535 ? port() - 1 : port() + 1;
    const foreign = [`evil.example:${port()}`, 'evil.example', `localhost.evil.example:${port()}`, `127.0.0.1.nip.io:${port()}`];
    foreign.push(`127.0.0.1:${other}`, 'localhost'); // the wrong port; no port (80)
    for (const host of foreign) {
      for (const r of routes(p.pid)) {
        const res = await rawRequest(`${h.server.url}${r.path}`, { headers: { ...auth(), ...r.headers, host }, body: r.body });
        expect({ host, path: r.path, status: res.status }).toEqual({ host, path: r.path, status: 403 });
        expect(res.body).toEqual({
          error: {
            code: 'permission_denied',
            category: 'permission_denied',
            message: expect.stringContaining('Host header'),
            details: { reason: 'host_not_allowed', header: 'host', value: host },
          },
        });
      }
    }
    expect((await h.rt.process(p.pid)).status).toBe('runnable');
  });

  it("[K-8.5] a loopback Host with the server's port passes: localhost, 127.0.0.1, [::1], in any case", async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    for (const host of [`localhost:${port()}`, `LocalHost:${port()}`, `127.0.0.1:${port()}`, `[::1]:${port()}`]) {
      for (const r of routes(p.pid).filter((x) => !x.path.endsWith('/call'))) {
        const res = await rawRequest(`${h.server.url}${r.path}`, { headers: { ...auth(), ...r.headers, host }, body: r.body });
        expect({ host, path: r.path, status: res.status }).toEqual({ host, path: r.path, status: 200 });
      }
    }
  });

  it('[K-8.5] a foreign Origin is 403 naming the header on REST, SSE and /mcp; no Origin or a loopback one passes', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const foreign = ['http://evil.example', `http://evil.example:${port()}`, 'null', 'http://localhost.evil.example'];
    foreign.push(`ftp://127.0.0.1:${port()}`, `${h.server.url}/x`); // not http(s); not an origin
    for (const origin of foreign) {
      for (const r of routes(p.pid)) {
        const init = { method: r.body ? 'POST' : 'GET', headers: { ...auth(), ...r.headers, origin }, body: r.body ?? null };
        const res = await fetch(`${h.server.url}${r.path}`, init);
        expect({ origin, path: r.path, status: res.status }).toEqual({ origin, path: r.path, status: 403 });
        expect(await res.json()).toEqual({
          error: {
            code: 'permission_denied',
            category: 'permission_denied',
            message: expect.stringContaining('Origin header'),
            details: { reason: 'origin_not_allowed', header: 'origin', value: origin },
          },
        });
      }
    }
    expect((await h.rt.process(p.pid)).status).toBe('runnable');

    // The official MCP client, sent from a foreign page's Origin, is refused at connect.
    const mcpAs = async (origin: string) => {
      const client = new Client({ name: 'libos-test', version: '0.0.0' });
      const url = new URL(`${h.server.url}/mcp/processes/${p.pid}`);
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { ...auth(), origin } } }));
      return client;
    };
    await expect(mcpAs('http://evil.example')).rejects.toMatchObject({ code: 403, message: expect.stringContaining('Origin header') });
    const client = await mcpAs(`http://localhost:${port()}`);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();

    expect((await h.api('/api/health')).status).toBe(200);
    for (const origin of [h.server.url, 'http://localhost:5173', 'https://[::1]']) {
      const res = await fetch(`${h.server.url}/api/health`, { headers: { ...auth(), origin } });
      expect({ origin, status: res.status }).toEqual({ origin, status: 200 });
    }
    const stream = await openSse(`${h.server.url}/api/events/stream`, { ...auth(), origin: 'http://127.0.0.1:5173' });
    expect(stream.status).toBe(200);
    await stream.close();
  });
});

describe('hostGuard', () => {
  const app = (opts: Parameters<typeof hostGuard>[0]) => new Hono().use('*', hostGuard(opts)).get('/', (c) => c.text('ok'));
  const status = async (a: Hono, headers: Record<string, string>) => (await a.request('http://localhost/', { headers })).status;

  it('[K-8.5] accepts the configured non-loopback host (allowNonLoopback) in Host and Origin, and nothing else', async () => {
    const a = app({ port: 8080, hostnames: ['box.lan'] });
    expect(await status(a, { host: 'box.lan:8080' })).toBe(200);
    expect(await status(a, { host: 'BOX.lan:8080', origin: 'http://box.lan:3000' })).toBe(200);
    expect(await status(a, { host: 'localhost:8080', origin: 'https://box.lan' })).toBe(200);
    expect(await status(a, { host: 'other.lan:8080' })).toBe(403);
    expect(await status(a, { host: 'box.lan:8081' })).toBe(403);
    expect(await status(a, { host: 'box.lan:8080', origin: 'http://other.lan' })).toBe(403);
    // No Host header: the URL's host decides (here localhost on port 80, not 8080).
    const missing = await app({ port: 8080 }).request('http://localhost/');
    expect(missing.status).toBe(403);
    const body = await missing.json();
    expect(body).toMatchObject({ error: { message: expect.stringContaining('Host header missing'), details: { header: 'host' } } });
  });

  it('[K-8.5] createApp without host options takes loopback hosts on any port, so in-process requests work', async () => {
    const token = 'a-token-for-in-process-requests';
    const a = createApp({ runtime: h.rt, token });
    expect((await a.request('/api/health', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await a.request('/api/health', { headers: { authorization: `Bearer ${token}`, host: '127.0.0.1:1234' } })).status).toBe(200);
    expect((await a.request('/api/health', { headers: { authorization: `Bearer ${token}`, host: 'evil.example' } })).status).toBe(403);
  });
});
