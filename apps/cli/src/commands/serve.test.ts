import { realpathSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, startLibos, tempStore, writeScript } from '../testing/libos-bin.js';

beforeAll(() => assertBuilt());

/** Resolves with the first line the server prints; rejects if it exits first. */
function firstLine(run: ReturnType<typeof startLibos>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let buf = '';
    run.child.stdout.on('data', (d: string) => {
      buf += d;
      const end = buf.indexOf('\n');
      if (end >= 0) resolve(buf.slice(0, end));
    });
    void run.exited.then((code) => reject(new Error(`libos serve exited (${code}) before printing a line; stderr: ${run.stderr}`)));
  });
}

describe('libos serve', { timeout: 60_000 }, () => {
  it(`prints {url, token, db, pid, scheduler, console} as one JSON line, answers /api/health with the token, serves the console at /, \
holds the lease, exits 0 on SIGINT`, async () => {
    const { db, dir } = tempStore('libos-serve-');
    const server = startLibos(db, ['serve', '--port', '0']);
    const info = JSON.parse(await firstLine(server)) as { url: string; token: string; db: string };
    expect(info).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      token: expect.stringMatching(/^[0-9a-f]{64}$/),
      db: realpathSync(db),
      pid: server.child.pid,
      scheduler: null,
      console: `${info.url}/#token=${info.token}`,
    });
    // The web console is bundled with the server: its page needs no token (the page asks the API with the one in the fragment).
    const page = await fetch(`${info.url}/`);
    expect({ status: page.status, type: page.headers.get('content-type') }).toEqual({ status: 200, type: 'text/html; charset=utf-8' });
    expect(await page.text()).toContain('<title>libOS console</title>');

    const health = await fetch(`${info.url}/api/health`, { headers: { authorization: `Bearer ${info.token}` } });
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, db: info.db });
    expect((await fetch(`${info.url}/api/health`)).status).toBe(401);
    const spawned = await fetch(`${info.url}/api/processes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${info.token}` },
      body: JSON.stringify({ goal: 'served' }),
    });
    expect(spawned.status).toBe(201);
    // The server holds the store's writer lease: a command that needs the store to itself is refused, naming it.
    const script = writeScript(dir, 'turns.json', '[]');
    expectRefused(
      libosOn(db).run('run', '--script', script),
      1,
      `store_locked: store ${realpathSync(db)} is served by libos serve (pid ${server.child.pid}) at ${info.url}`,
    );

    server.child.kill('SIGINT');
    expect(await server.exited).toBe(0);
    // The lease is released: the process spawned over HTTP is in the store.
    expect(libosOn(db).json('ps')).toEqual([expect.objectContaining({ goal: 'served', status: 'runnable' })]);
  });

  it('takes --token, stops on SIGTERM, and refuses a non-loopback host or a bad port before serving', async () => {
    const { db } = tempStore('libos-serve-');
    const token = 'a-token-of-my-own-choosing';
    const server = startLibos(db, ['serve', '--token', token]);
    const info = JSON.parse(await firstLine(server)) as { url: string; token: string };
    expect(info.token).toBe(token);
    expect((await fetch(`${info.url}/api/health`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const { run } = libosOn(db);
    expectRefused(run('serve', '--host', '0.0.0.0'), 1, 'not a loopback address');
    expectRefused(run('serve', '--port', 'eighty'), 2, '--port must be an integer');
    expectRefused(run('serve', '--token', 'short'), 1, 'token');
  });
});
