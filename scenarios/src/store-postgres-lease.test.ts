// The PostgreSQL writer lease lost under a running runtime (issue 15): the server ends the session that holds the
// schema's advisory lock (`pg_terminate_backend`, as a restart or a dropped connection would), and the runtime says so
// (a process warning) and starts no more units of work (`store_poisoned` naming the cause). A real server
// (LIBOS_TEST_PG_URL; skipped with a line when none answers), one fresh schema per file, dropped after.
import { once } from 'node:events';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from './support/postgres.js';

const { schema: SCHEMA, url: STORE_URL } = freshSchema('t_lease');

/** Runs `text` on the server as the test's admin (outside any runtime). */
async function admin<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The backend holding the schema's writer lease: the advisory lock keyed (hashtext('libos'), hashtext(schema)). */
const leaseHolders = (schema: string) =>
  admin<{ pid: number }>(
    `select l.pid from pg_locks l
      where l.locktype = 'advisory' and l.granted and l.objsubid = 2
        and l.database = (select oid from pg_database where datname = current_database())
        and l.classid = (hashtext('libos')::bigint & 4294967295)::oid
        and l.objid = (hashtext($1)::bigint & 4294967295)::oid`,
    [schema],
  );

const unavailable = await probePostgres(PG_URL);
if (unavailable) console.log(`postgres lease: skipped (no server at ${PG_URL}: ${unavailable})`);

describe.skipIf(unavailable !== null)('the PostgreSQL writer lease, lost', () => {
  let rt: Runtime | undefined;

  afterAll(async () => {
    await rt?.close();
    await dropSchema(SCHEMA);
  });

  it('[K-15.8] the lease session terminated: a warning names the store, and the next call fails with store_poisoned', async () => {
    rt = await openRuntime({ path: STORE_URL, plugins: [capabilities(), session()] });
    const p = await rt.spawn({ goal: 'tell the time', budget: { tool_calls: null } });
    await rt.grant(p.pid, 'clock:now', ['read']);
    expect(await rt.call(p.pid, 'get_current_time', {})).toMatchObject({ ok: true });

    const holders = await leaseHolders(SCHEMA);
    expect(holders).toHaveLength(1);
    const warned = once(process, 'warning') as Promise<[Error & { code?: string }]>;
    await admin('select pg_terminate_backend($1)', [holders[0]!.pid]);
    const [warning] = await warned;
    expect(warning).toMatchObject({ name: 'LibosWarning', code: 'store_poisoned' });
    expect(warning.message).toContain(`schema=${SCHEMA}`);
    expect(warning.message).toMatch(/lost its writer lease/);

    const auditBefore = await admin<{ n: number }>(`select count(*)::int as n from ${SCHEMA}.audit_records`);
    const after = await rt.call(p.pid, 'get_current_time', {}).then(
      (r) => (r.ok ? r : r.error),
      (err: unknown) => err,
    );
    expect(after).toMatchObject({ code: 'store_poisoned', message: expect.stringMatching(/lost its writer lease.*close it and open/) });
    await expect(rt.spawn({ goal: 'another' })).rejects.toMatchObject({ code: 'store_poisoned' });
    // Nothing was written without the lease.
    expect(await admin<{ n: number }>(`select count(*)::int as n from ${SCHEMA}.audit_records`)).toEqual(auditBefore);

    // Closing still works, and the store opens again (a new lease).
    await rt.close();
    rt = await openRuntime({ path: STORE_URL, plugins: [capabilities(), session()] });
    expect(await leaseHolders(SCHEMA)).toHaveLength(1);
    expect(await rt.call(p.pid, 'get_current_time', {})).toMatchObject({ ok: true });
  });
});
