import { request } from 'node:http';
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, startLibos, tempStore, writeScript } from '../testing/libos-bin.js';

// Issue 12, a served runtime you can manage: while `libos serve` runs, the store's commands go through the server
// (its record beside the store), processes created over HTTP are granted with `libos grant` and call tools over MCP,
// the scheduler runs in the background with a provider, and a provider failure pauses the process (libos run exits 1).

beforeAll(() => assertBuilt());

interface ServeInfo {
  readonly url: string;
  readonly token: string;
  readonly db: string;
  readonly pid: number;
  readonly scheduler: { provider: string; model: string } | null;
}

const running: ReturnType<typeof startLibos>[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const r of running.splice(0)) {
    r.child.kill('SIGINT');
    await r.exited;
  }
});

/** Starts `libos serve` and resolves with the JSON line it prints. */
async function startServe(db: string, args: readonly string[] = [], env: Record<string, string> = {}) {
  const server = startLibos(db, ['serve', ...args], env);
  running.push(server);
  await server.waitFor('\n');
  return { server, info: JSON.parse(server.stdout.split('\n')[0]!) as ServeInfo };
}

async function stop(server: ReturnType<typeof startLibos>): Promise<number | null> {
  running.splice(running.indexOf(server), 1);
  server.child.kill('SIGINT');
  return server.exited;
}

const auth = (info: ServeInfo) => ({ authorization: `Bearer ${info.token}`, 'content-type': 'application/json' });

async function mcpOverHttp(info: ServeInfo, pid: string): Promise<Client> {
  // The synchronous `libos` runs block this event loop for seconds: let it see the sockets the server closed meanwhile
  // (idle keep-alive), so the client does not reuse a dead one.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const client = new Client({ name: 'libos-cli-test', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${info.url}/mcp/processes/${pid}`), {
      requestInit: { headers: { authorization: `Bearer ${info.token}` } },
    }),
  );
  clients.push(client);
  return client;
}

/** One raw request with the headers as given (fetch would replace Host). */
function raw(url: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Polls `libos show` until the process has `status` (the test's own timeout bounds it). */
async function untilStatus(db: string, pid: string, status: string): Promise<void> {
  const { json } = libosOn(db);
  while (json('show', pid).status !== status) await new Promise((r) => setTimeout(r, 200));
}

describe('libos serve: a served runtime the CLI manages', { timeout: 240_000 }, () => {
  it('[issue 12] served: grant, ps, caps work; an HTTP-created process is granted, calls a tool over MCP; bad Host 403', async () => {
    const { db } = tempStore('libos-served-');
    const { server, info } = await startServe(db);
    const record = `${realpathSync(db)}.serve.json`;
    expect(JSON.parse(readFileSync(record, 'utf8'))).toEqual({
      url: info.url,
      token: info.token,
      pid: server.child.pid,
      db: realpathSync(db),
    });
    expect(statSync(record).mode & 0o777).toBe(0o600);

    const created = await fetch(`${info.url}/api/processes`, {
      method: 'POST',
      headers: auth(info),
      body: JSON.stringify({ goal: 'tell the time over MCP' }),
    });
    const { pid } = (await created.json()) as { pid: string };
    const { json, run } = libosOn(db);
    const cap = json('grant', pid, 'clock:now', 'read');
    expect(cap).toMatchObject({ subject: pid, resource: 'clock:now', rights: ['read'], effect: 'allow' });
    expect(json('ps')).toEqual([expect.objectContaining({ pid, goal: 'tell the time over MCP', status: 'runnable' })]);
    expect(json('caps', pid)).toEqual(expect.arrayContaining([expect.objectContaining({ id: cap.id, resource: 'clock:now' })]));
    expect(run('caps', pid).stdout).toContain('clock:now');
    expect(json('show', pid)).toMatchObject({ pid, status: 'runnable', budget: { usage: expect.any(Object) } });

    const now = await (await mcpOverHttp(info, pid)).callTool({ name: 'get_current_time', arguments: {} });
    expect(now.isError).toBeFalsy();
    expect(JSON.parse((now.content as { text: string }[])[0]!.text)).toMatchObject({ timezone: 'UTC' });
    // The grant was the host's, through the server; the call was the process's, audited like any tool.
    expect(json('audit', '--action', 'capability.issue').at(-1)).toMatchObject({ actor: 'host', target: 'clock:now' });
    expect(json('audit', '--pid', pid, '--action', 'tool.call')).toEqual([
      expect.objectContaining({ target: 'tool:get_current_time', decision: 'ok' }),
    ]);
    expect(json('events', '--pid', pid, '--type', 'tool_completed')).toHaveLength(1);

    expect(json('revoke', cap.id)).toEqual({ revoked: cap.id });
    const refused = await (await mcpOverHttp(info, pid)).callTool({ name: 'get_current_time', arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]!.text).toContain('permission_denied');

    const port = new URL(info.url).port;
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
    });
    const headers = {
      authorization: `Bearer ${info.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const foreignHost = await raw(info.url, `/mcp/processes/${pid}`, { ...headers, host: `evil.example:${port}` }, init);
    expect(foreignHost.status).toBe(403);
    expect(JSON.parse(foreignHost.body)).toMatchObject({ error: { code: 'permission_denied', details: { header: 'host' } } });
    const foreignOrigin = await raw(
      info.url,
      `/mcp/processes/${pid}`,
      { ...headers, host: `127.0.0.1:${port}`, origin: 'https://evil.example' },
      init,
    );
    expect(foreignOrigin.status).toBe(403);
    expect(JSON.parse(foreignOrigin.body)).toMatchObject({ error: { code: 'permission_denied', details: { header: 'origin' } } });
    expect(
      (await raw(info.url, `/mcp/processes/${pid}`, { ...headers, host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` }, init))
        .status,
    ).toBe(200);

    expect(await stop(server)).toBe(0);
    expect(existsSync(record)).toBe(false);
    // Not served any more: the commands open the store themselves, and see what the server wrote.
    expect(json('caps', pid, '--all')).toEqual(expect.arrayContaining([expect.objectContaining({ id: cap.id, status: 'revoked' })]));
  });

  it('a record whose server does not answer (a crash, its pid reused) is forgotten: the command opens the store itself', async () => {
    const { db } = tempStore('libos-served-');
    const { json } = libosOn(db);
    json('init');
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const record = `${realpathSync(db)}.serve.json`;
    // This test's own pid: alive, but nothing listens at the recorded address.
    writeFileSync(
      record,
      JSON.stringify({ url: `http://127.0.0.1:${port}`, token: 'x'.repeat(32), pid: process.pid, db: realpathSync(db) }),
      { mode: 0o600 },
    );
    expect(json('ps')).toEqual([]);
    expect(existsSync(record)).toBe(false);
  });

  it('[K-61] the other store commands go through the server too (spawn, call, send, human, objects, pause...); run refuses', async () => {
    const { db, dir } = tempStore('libos-served-');
    await startServe(db);
    const { json, run } = libosOn(db);
    const p = json('spawn', '--goal', 'through the server', '--tool-calls', '7');
    expect(json('show', p.pid)).toMatchObject({ budget: { limits: { tool_calls: 7 } } });
    json('grant', p.pid, 'clock:now', 'read');
    expect(json('call', p.pid, 'get_current_time')).toMatchObject({ ok: true, tool: 'get_current_time' });
    expect(run('call', p.pid, 'sleep', '{"seconds": 1}').code).toBe(1);
    expect(json('send', p.pid, 'hello')).toMatchObject({ sender: 'human:owner' });
    expect(json('human', 'list')).toEqual([]);
    expect(json('llm-calls')).toEqual([]);
    expect(json('objects', '--pid', p.pid).map((o: { name: string }) => o.name)).toContain('goal');
    expect(json('skills').map((s: { skill_id: string }) => s.skill_id)).toContain('agent-libos-runtime-session');
    expect(json('pause', p.pid)).toMatchObject({ status: 'paused' });
    expect(json('resume', p.pid)).toMatchObject({ status: 'runnable' });
    expectRefused(run('call', 'pid_0000000000000000', 'get_current_time'), 1, 'process_not_found');
    const script = writeScript(dir, 'turns.json', '[]');
    // libos run needs the store to itself: one line saying what to do, exit 1, nothing run.
    const refused = run('run', '--script', script);
    expectRefused(refused, 1, `store_locked: store ${realpathSync(db)} is served by libos serve`);
    expect(refused.stderr).toContain('which runs no scheduler: this command needs the store to itself; stop the server');
    expect(refused.stderr).toContain('or restart it with libos serve --provider openai|script');
    expectRefused(run('scheduler', 'pause'), 1, 'no background scheduler');
  });

  it('[K-61] serve --provider script runs the scheduler in the background; pause holds new work until resume; run refuses', async () => {
    const { db, dir } = tempStore('libos-served-');
    const script = writeScript(
      dir,
      'turns.json',
      JSON.stringify({ processes: { '*': [[{ tool: 'process_exit', args: { message: 'done in the background' } }]] } }),
    );
    const { info } = await startServe(db, ['--provider', 'script', '--script', script]);
    expect(info.scheduler).toMatchObject({ provider: 'scripted' });
    const { json } = libosOn(db);
    const first = json('spawn', '--goal', 'run without libos run').pid;
    await untilStatus(db, first, 'exited');

    expect(json('scheduler', 'pause')).toMatchObject({ mode: 'background', state: 'paused' });
    const second = json('spawn', '--goal', 'wait for the resume').pid;
    expect(json('scheduler', 'status')).toMatchObject({ state: 'paused', busy: false });
    expect(json('show', second).status).toBe('runnable');
    expect(json('scheduler', 'resume')).toMatchObject({ state: 'running' });
    await untilStatus(db, second, 'exited');
    // libos run on this store: the server's scheduler already runs the processes; one line says so and how to follow.
    const refused = libosOn(db).run('run', '--script', script);
    expectRefused(refused, 1, 'whose scheduler runs its processes in the background (running): nothing to run here');
    expect(refused.stderr).toContain('libos events --follow');
    expect(json('events', '--type', 'scheduler_paused')).toHaveLength(1);
  });

  it('libos run against an unreachable provider: retries on stderr, the process paused with the error, exit 1; resume', async () => {
    // A port nothing listens on.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { db } = tempStore('libos-served-');
    const { json } = libosOn(db);
    const pid = json('spawn', '--goal', 'talk to a model that is down').pid;
    const env = { LIBOS_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, LIBOS_OPENAI_MODEL: 'gone-model' };
    const r = startLibos(db, ['run', '--provider', 'openai'], env);
    expect(await r.exited).toBe(1);
    const retries = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('retry '));
    expect(retries).toHaveLength(3);
    expect(retries[0]).toMatch(
      new RegExp(
        `^retry ${pid}: attempt 1 of 4 failed \\(provider_error: openai provider: network error: .*\\), retrying in \\d+\\.\\d s$`,
      ),
    );
    expect(r.stdout).toMatch(new RegExp(`q1 +${pid} +paused .* provider_error: openai provider: network error`));
    expect(r.stdout).toContain(`provider failed: ${pid} paused: provider_error`);
    expect(r.stdout).toContain(`libos resume ${pid}`);
    expect(json('show', pid)).toMatchObject({
      status: 'paused',
      wait_state: { kind: 'paused', reason: expect.stringContaining('model provider failed: provider_error') },
    });
    expect(json('events', '--type', 'llm_retry').map((e: { data: { attempt: number } }) => e.data.attempt)).toEqual([1, 2, 3]);
    expect(json('llm-calls')).toEqual([expect.objectContaining({ pid, status: 'error' })]);

    const again = JSON.parse(libosOn(db, env).run('--json', 'run', '--provider', 'openai').stdout || '{}');
    expect(again).toMatchObject({ quanta: 0, provider_failures: [] });
    expect(json('resume', pid)).toMatchObject({ status: 'runnable' });
  });
});
