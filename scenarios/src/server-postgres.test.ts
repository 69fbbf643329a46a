// The HTTP server on a runtime opened on PostgreSQL (issue 15): what `libos serve --db postgres://…` serves. A real
// server (LIBOS_TEST_PG_URL; skipped with a line when none answers), one fresh schema per file, dropped after.
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { type RunningServer, serve } from '@libos/server';
import { session } from '@libos/session';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from './support/postgres.js';

const { schema: SCHEMA, url: STORE_URL } = freshSchema('t_serve');

const unavailable = await probePostgres(PG_URL);
if (unavailable) console.log(`postgres server routes: skipped (no server at ${PG_URL}: ${unavailable})`);

describe.skipIf(unavailable !== null)('the HTTP server on a PostgreSQL runtime', () => {
  let rt: Runtime | undefined;
  let server: RunningServer | undefined;

  afterAll(async () => {
    await server?.close();
    await rt?.close();
    await dropSchema(SCHEMA);
  });

  it('[K-15.9] health names the URL without its password; spawn, grant and a checked call over REST; events in seq order', async () => {
    rt = await openRuntime({ path: STORE_URL, plugins: [capabilities(), objectMemory(), session()] });
    server = await serve({ runtime: rt });
    const api = async (path: string, body?: unknown) => {
      const res = await fetch(`${server!.url}/api${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${server!.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> & unknown[] };
    };

    expect(await api('/health')).toEqual({ status: 200, body: { ok: true, db: rt.location, provider: null } });
    expect(rt.location).not.toMatch(/:\/\/[^/@]*:[^/@]*@/);

    const spawned = await api('/processes', { goal: 'tell the time', budget: { tool_calls: null } });
    expect(spawned).toMatchObject({ status: 201, body: { status: 'runnable', goal: 'tell the time' } });
    const pid = spawned.body.pid as string;
    expect(await api(`/processes/${pid}/grants`, { resource: 'clock:now', rights: ['read'] })).toMatchObject({ status: 201 });
    expect(await api(`/processes/${pid}/call`, { tool: 'get_current_time' })).toMatchObject({ status: 200, body: { ok: true } });

    const events = await api(`/events?pid=${pid}`);
    expect(events.status).toBe(200);
    const seqs = (events.body as unknown as { seq: unknown }[]).map((e) => e.seq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs.every((s) => typeof s === 'number')).toBe(true);
    expect(seqs).toEqual([...(seqs as number[])].sort((a, b) => a - b));
    expect(await api(`/processes/${pid}`)).toMatchObject({ status: 200, body: { pid, status: 'runnable' } });
  });
});
