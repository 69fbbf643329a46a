import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type Harness } from './internal/testing/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.stop();
});

const UNAUTHORIZED = { code: 'permission_denied', category: 'permission_denied', details: { reason: 'unauthorized' } };

describe('bearer auth', () => {
  it('[K-53] no bearer token is 401 with a JSON error on every route, known or not, REST, SSE or MCP', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    for (const [method, path] of [
      ['GET', '/api/health'],
      ['GET', '/api/snapshot'],
      ['GET', '/api/processes'],
      ['POST', '/api/processes'],
      ['GET', `/api/processes/${p.pid}`],
      ['POST', `/api/processes/${p.pid}/call`],
      ['GET', '/api/events/stream'],
      ['POST', `/mcp/processes/${p.pid}`],
      ['GET', '/no/such/route'],
    ] as const) {
      const res = await fetch(`${h.server.url}${path}`, {
        method,
        ...(method === 'POST' ? { body: JSON.stringify({ goal: 'sneaky', tool: 'process_exit', confirmed: true }) } : {}),
      });
      expect({ method, path, status: res.status, challenge: res.headers.get('www-authenticate') }).toEqual({
        method,
        path,
        status: 401,
        challenge: 'Bearer realm="libos"',
      });
      expect(await res.json()).toMatchObject({ error: { ...UNAUTHORIZED, message: expect.stringContaining('missing bearer token') } });
    }
    expect((await h.rt.processes()).map((x) => x.pid)).toEqual([p.pid]);
    expect((await h.rt.process(p.pid)).status).toBe('runnable');
  });

  it('a wrong token, another scheme or a token with trailing junk is 401; the right one passes', async () => {
    for (const authorization of [`Bearer ${h.server.token}x`, `Basic ${h.server.token}`, `Bearer`, `Bearer ${h.server.token} extra`]) {
      const res = await fetch(`${h.server.url}/api/health`, { headers: { authorization } });
      expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
      expect(await res.json()).toMatchObject({ error: UNAUTHORIZED });
    }
    expect((await h.api('/api/health', { token: h.server.token })).status).toBe(200);
    const lower = await fetch(`${h.server.url}/api/health`, { headers: { authorization: `bearer ${h.server.token}` } });
    expect(lower.status).toBe(200);
  });

  it('with the token, an unknown route is a 404 JSON error', async () => {
    expect(await h.api('/api/nope')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found', message: 'no route GET /api/nope' } },
    });
  });
});
