// A runtime on a real PostgreSQL server (issue 15, Deliver 1: one host): `openRuntime({ path: 'postgres://…' })` with
// the plugins a user loads, the same calls and step as on SQLite, close and reopen, the writer lease, and each bad
// input refused in one line with nothing written. LIBOS_TEST_PG_URL names the server (default: the local one CI
// starts, trust auth); with none answering the suite is skipped, saying why. One fresh schema per file, dropped after.
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import pg from 'pg';
import { dropSchema, freshSchema, PG_URL, probePostgres } from './support/postgres.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_ONLY, openHarness } from './support/kernel-harness.js';

const URL_ = PG_URL;
/** This file's schemas: one fresh schema per name the tests use (a reopen by the same name finds the same one). */
const schemas = new Map<string, { readonly schema: string; readonly url: string }>();
const fresh = (name: string) => {
  let made = schemas.get(name);
  if (!made) schemas.set(name, (made = freshSchema(`t_pgrt_${name}`)));
  return made;
};
const schemaUrl = (name: string) => fresh(name).url;

/** Runs `text` on the server as the test's admin (outside any runtime). */
async function admin<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const tablesOf = async (schema: string) =>
  (await admin<{ t: string }>('select table_name as t from information_schema.tables where table_schema = $1 order by 1', [schema])).map(
    (r) => r.t,
  );

const unavailable = await probePostgres(URL_);
if (unavailable) console.log(`postgres runtime: skipped (no server at ${URL_}: ${unavailable})`);

describe.skipIf(unavailable !== null)('a runtime on PostgreSQL', () => {
  const open: Runtime[] = [];
  const openPg = async (suffix = 'main') => {
    const rt = await openRuntime({ path: schemaUrl(suffix), plugins: [capabilities(), objectMemory(), session()] });
    open.push(rt);
    return rt;
  };
  const close = async (rt: Runtime) => {
    open.splice(open.indexOf(rt), 1);
    await rt.close();
  };

  beforeAll(async () => {
    await admin(`create schema ${fresh('foreign').schema}`);
    await admin(`create table ${fresh('foreign').schema}.accounts (id int primary key)`);
  });

  afterEach(async () => {
    for (const rt of open.splice(0)) await rt.close();
  });

  afterAll(async () => {
    for (const { schema } of schemas.values()) await dropSchema(schema);
  });

  it('[K-15.4] spawn, grant, a checked call, an Object created and read, a scripted step to exit; reopened, all is there', async () => {
    const rt = await openPg();
    expect(rt.location).toBe(schemaUrl('main').replace(/:[^:@/]*@/, '@'));
    const p = await rt.spawn({ goal: 'tell the time', budget: { tool_calls: null } });
    await rt.grant(p.pid, 'clock:now', ['read']);
    const time = await rt.call(p.pid, 'get_current_time', {});
    expect(time).toMatchObject({ ok: true });
    await rt.activateSkill(p.pid, 'agent-libos-object-memory');
    const created = await rt.call(p.pid, 'create_memory_object', { type: 'plan', name: 'plan', payload: { step: 1 } });
    expect(created).toMatchObject({ ok: true });
    const read = await rt.call(p.pid, 'read_memory_object', { name: 'plan' });
    expect(read).toMatchObject({ ok: true, payload: { payload: { step: 1 } } });
    const provider = new ScriptedProvider({
      processes: { '*': [[{ tool: 'get_current_time', args: {} }], [{ tool: 'process_exit', args: { message: 'done' } }]] },
    });
    const report = await rt.run({ provider });
    expect(report.quanta).toBe(2);
    expect(report.results.flatMap((q) => q.executed)).toEqual(['get_current_time', 'process_exit']);
    expect((await rt.process(p.pid)).status).toBe('exited');
    const audit = await rt.audit({ pid: p.pid, limit: 1000 });
    await close(rt);

    const again = await openPg();
    const info = await again.process(p.pid);
    expect(info.status).toBe('exited');
    expect(typeof info.createdAt).toBe('string');
    expect(await again.audit({ pid: p.pid, limit: 1000 })).toEqual(audit);
    expect(audit.map((a) => a.action)).toContain('tool.call');
    expect(audit.every((a, i) => i === 0 || a.seq > audit[i - 1]!.seq)).toBe(true);
  });

  it('[K-15.4] a prompt is built from the events on jsonb (own grants left out by their JSON text), not failed', async () => {
    const { rt } = await openHarness({ path: schemaUrl('context') });
    open.push(rt);
    const pid = (await rt.spawn({ goal: 'GOAL-TEXT-17', image: IMAGE_ONLY })).pid;
    const provider = new ScriptedProvider([]);
    await rt.run({ provider });
    expect(provider.requests.length).toBeGreaterThan(0);
    expect((await rt.process(pid)).outcome?.code).not.toBe('internal_error');
  });

  it('[K-15.5] a second open while the first holds the store is store_locked; after close it opens', async () => {
    const first = await openPg('lease');
    await expect(openPg('lease')).rejects.toMatchObject({ code: 'store_locked' });
    await close(first);
    await openPg('lease');
  });

  it('[K-15.6] an unreachable server, wrong credentials, another application’s schema: one line each, nothing written', async () => {
    const url = new URL(URL_);
    const refused = async (path: string) => {
      const err = await openRuntime({ path, plugins: [capabilities()] }).then(
        () => null,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(err).not.toBeNull();
      expect(err!.message).not.toContain('\n');
      return err!;
    };
    const unreachable = await refused(`postgres://postgres@127.0.0.1:1/test?schema=${fresh('x').schema}`);
    expect(unreachable).toMatchObject({ code: 'store_not_found' });
    expect(unreachable.message).toMatch(/unreachable/);
    const wrong = new URL(URL_);
    wrong.username = 'libos_no_such_role';
    wrong.password = 'secret-pw';
    const creds = await refused(`${wrong.toString()}${wrong.search ? '&' : '?'}schema=${fresh('y').schema}`);
    expect(creds.code).toBe('permission_denied');
    expect(creds.message).not.toContain('secret-pw');
    const foreign = await refused(schemaUrl('foreign'));
    expect(foreign).toMatchObject({ code: 'not_a_libos_store' });
    expect(foreign.message).toMatch(/accounts; no libos_meta/);
    expect(await tablesOf(fresh('foreign').schema)).toEqual(['accounts']);
    url.searchParams.set('schema', 'Bad-Name');
    const bad = await refused(url.toString());
    expect(bad.code).toBe('invalid_arguments');
    expect((await admin('select 1 from pg_namespace where nspname in ($1, $2)', [fresh('x').schema, fresh('y').schema])).length).toBe(0);
  });

  it('[K-15.7] a store whose schema_version is newer is refused and left as it was', async () => {
    await close(await openPg('newer'));
    await admin(`update ${fresh('newer').schema}.libos_meta set value = '999' where key = 'schema_version'`);
    const before = await admin(`select * from ${fresh('newer').schema}.libos_migrations order by owner, name`);
    await expect(openPg('newer')).rejects.toMatchObject({ code: 'schema_version_mismatch', message: expect.stringMatching(/999/) });
    expect(await admin(`select * from ${fresh('newer').schema}.libos_migrations order by owner, name`)).toEqual(before);
    expect(await admin(`select value from ${fresh('newer').schema}.libos_meta where key = 'schema_version'`)).toEqual([{ value: '999' }]);
  });
});
