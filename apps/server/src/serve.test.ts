import { openRuntime, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { serve } from './serve.js';
import { startServer, type Harness } from './internal/testing/harness.js';
import { openSse } from './internal/testing/sse-client.js';

let h: Harness | undefined;
let rt: Runtime | undefined;
afterEach(async () => {
  await h?.stop();
  await rt?.close();
  h = undefined;
  rt = undefined;
});

describe('serve', () => {
  it('listens on 127.0.0.1 with a fresh 32-byte hex token by default', async () => {
    h = await startServer();
    expect(h.server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(h.server.token).toMatch(/^[0-9a-f]{64}$/);
    expect(await h.api('/api/health')).toEqual({ status: 200, body: { ok: true, db: h.rt.location, provider: null } });
  });

  it('refuses a non-loopback host unless it is explicitly allowed, and a token too short to be secret', async () => {
    rt = await openRuntime({ path: ':memory:' });
    await expect(serve({ runtime: rt, host: '0.0.0.0' })).rejects.toMatchObject({ code: 'invalid_arguments', details: { field: 'host' } });
    await expect(serve({ runtime: rt, token: 'short' })).rejects.toMatchObject({ code: 'invalid_arguments', details: { field: 'token' } });
    await expect(serve({ runtime: rt, port: 70_000 })).rejects.toMatchObject({ code: 'invalid_arguments', details: { field: 'port' } });
    const s = await serve({ runtime: rt, host: 'localhost', token: 'a-token-of-my-own-choosing' });
    expect(s.url).toMatch(/^http:\/\/localhost:\d+$/);
    expect(s.token).toBe('a-token-of-my-own-choosing');
    const res = await fetch(`${s.url}/api/health`, { headers: { authorization: 'Bearer a-token-of-my-own-choosing' } });
    expect(res.status).toBe(200);
    await s.close();
  });

  it('close() ends open SSE streams and resolves `closed`; a second close() is a no-op', async () => {
    h = await startServer();
    const stream = await openSse(`${h.server.url}/api/events/stream`, { authorization: `Bearer ${h.server.token}` });
    expect(await stream.next()).toEqual({ comment: 'connected' });
    await h.server.close();
    await h.server.closed;
    // The server ends the connection: the reader sees the end of the stream, or the socket dropped under it.
    const outcome = await stream.ended().then(
      (clean) => (clean ? 'ended' : 'another message'),
      () => 'dropped',
    );
    expect(['ended', 'dropped']).toContain(outcome);
    await h.server.close();
  });

  it('POST /api/shutdown answers 202, then stops the server', async () => {
    h = await startServer();
    expect(await h.api('/api/shutdown', { method: 'POST' })).toEqual({ status: 202, body: { ok: true, shutting_down: true } });
    await h.server.closed;
    await expect(fetch(`${h.server.url}/api/health`)).rejects.toThrow();
  });
});
