// Opening a runtime as one of many hosts (issue 15, K-15.11): bad host options fail before anything is opened, a
// SQLite store has one writer, and a single-host runtime and a group of hosts on one PostgreSQL schema exclude each
// other.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { LibosError } from '@libos/sdk';
import { session } from '@libos/session';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_hostopts');
const open = (host?: { id?: string; leaseMs?: number; claimBatch?: number }, path = url) =>
  openRuntime({ path, plugins: [capabilities(), session()], ...(host ? { host } : {}) });
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LibosError);
  return err as LibosError;
};

async function query<R>(text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    return (await c.query(text)).rows as R[];
  } finally {
    await c.end();
  }
}

describe('[K-15.11] host options', () => {
  it('[K-15.11] a SQLite store has one writer: host options are invalid_arguments naming the field, no file made', async () => {
    const file = join(tmpdir(), `libos-hostopts-${process.pid}.db`);
    const err = await failure(open({ id: 'a' }, file));
    expect(err.code).toBe('invalid_arguments');
    expect(err.message).toMatch(/^host: .*postgres:\/\//);
    expect(existsSync(file)).toBe(false);
  });

  it('[K-15.11] a lease period out of bounds names the field and the bounds; nothing is opened', async () => {
    const err = await failure(open({ leaseMs: 10 }));
    expect(err.code).toBe('invalid_arguments');
    expect(err.message).toBe('host.leaseMs: must be an integer from 1000 to 600000 (got 10)');
    const bad = await failure(open({ id: 'no spaces' }));
    expect(bad.message).toMatch(/^host\.id: /);
    if (!unavailable) expect(await query(`select 1 from pg_namespace where nspname = '${schema}'`)).toEqual([]);
  });
});

describe.skipIf(unavailable !== null)('[K-15.11] hosts and a single-host runtime on one PostgreSQL schema', () => {
  const opened: Runtime[] = [];
  afterAll(async () => {
    for (const rt of opened) await rt.close().catch(() => undefined);
    await dropSchema(schema);
  });

  it('[K-15.11] a single-host runtime keeps hosts out (store_locked), and two hosts keep a single-host runtime out', async () => {
    const single = await open();
    const refused = await failure(open({ id: 'h1' }));
    expect(refused.code).toBe('store_locked');
    expect(refused.message).toMatch(/single-host runtime/);
    expect(refused.message).toContain(`(libos pid ${process.pid} on `); // who holds it, from its lease session's name
    await single.close();

    const h1 = await open({ id: 'h1', leaseMs: 1000 });
    const h2 = await open({ id: 'h2', leaseMs: 1000 });
    opened.push(h1, h2);
    expect([h1.hostId, h2.hostId]).toEqual(['h1', 'h2']);
    const locked = await failure(open());
    expect(locked.code).toBe('store_locked');
    // names the hosts and says how to join them
    expect(locked.message).toMatch(/shared by 2 runtime host\(s\) \(libos host h1 pid \d+ on .+, libos host h2 pid \d+ on .+\)/);
    expect(locked.message).toContain('--host-id');
  });

  it('[K-15.11] a host runs the trees it claims; a clean close lets them go and leaves the roster', async () => {
    const [h1, h2] = opened as [Runtime, Runtime];
    const p = await h2.spawn({ goal: 'claimed by whoever runs first', budget: { tool_calls: null } });
    const { ScriptedProvider } = await import('@libos/kernel');
    const r = await h1.run({ provider: new ScriptedProvider([[{ tool: 'process_exit', args: {} }]]) });
    expect(r.results.map((q) => q.pid)).toEqual([p.pid]);
    expect((await h2.process(p.pid)).status).toBe('exited');
    expect(await query<{ host_id: string }>(`select host_id from ${schema}.libos_hosts order by host_id`)).toEqual([
      { host_id: 'h1' },
      { host_id: 'h2' },
    ]);
    await h1.close();
    expect(await query(`select host_id from ${schema}.libos_tree_leases where host_id = 'h1'`)).toEqual([]);
    expect(await query<{ host_id: string }>(`select host_id from ${schema}.libos_hosts`)).toEqual([{ host_id: 'h2' }]);
  });
});
