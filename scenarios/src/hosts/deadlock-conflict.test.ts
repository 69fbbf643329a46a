// A unit of work the PostgreSQL server ends to break a deadlock (K-15.22): a real deadlock between the runtime's
// session and another one on the same schema. The runtime's unit is the victim (the other session's
// deadlock_timeout is far longer, so the runtime's check runs first); it fails as `conflict`, keeps nothing, and the
// runtime goes on.
import { openRuntime, type Runtime } from '@libos/kernel';
import { LibosError } from '@libos/sdk';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_deadlock');

describe.skipIf(unavailable !== null)('[K-15.22] a deadlock on PostgreSQL', () => {
  let rt: Runtime | undefined;
  let other: pg.Client | undefined;
  afterAll(async () => {
    await other?.end().catch(() => undefined);
    await rt?.close();
    await dropSchema(schema);
  });

  it('[K-15.22] the unit the server ends is conflict naming SQLSTATE 40P01; nothing of it is kept; the next unit runs', async () => {
    rt = await openRuntime({ path: url, plugins: [] });
    await rt.transaction(async (scope) => {
      await sql`create table probe (id integer primary key, v integer not null)`.execute(scope.store);
      await sql`insert into probe (id, v) values (1, 0), (2, 0)`.execute(scope.store);
    });
    other = new pg.Client({ connectionString: PG_URL });
    await other.connect();
    await other.query(`set search_path to ${schema}`);
    await other.query(`set deadlock_timeout = '30s'`); // this session waits; the runtime's finds the deadlock
    await other.query('begin');
    await other.query('update probe set v = 10 where id = 2');

    let release!: () => void;
    const rowOneLocked = new Promise<void>((resolve) => (release = resolve));
    const unit = rt.transaction(async (scope) => {
      await sql`update probe set v = 1 where id = 1`.execute(scope.store);
      await sql`insert into probe (id, v) values (3, 3)`.execute(scope.store);
      release();
      await sql`update probe set v = 1 where id = 2`.execute(scope.store); // waits for the other session
    });
    await rowOneLocked;
    const otherWaits = other.query('update probe set v = 10 where id = 1'); // closes the cycle
    const failure = await unit.then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(LibosError);
    expect(failure).toMatchObject({ code: 'conflict', details: { sqlstate: '40P01' } });
    expect((failure as LibosError).message).toMatch(/deadlock.*SQLSTATE 40P01.*nothing it wrote was kept; run it again$/s);
    await otherWaits; // the runtime's unit is gone, so the other session gets row 1
    await other.query('commit');

    const rows = await rt.transaction(
      async (scope) => (await sql<{ id: number; v: number }>`select id, v from probe order by id`.execute(scope.store)).rows,
    );
    expect(rows).toEqual([
      { id: 1, v: 10 },
      { id: 2, v: 10 },
    ]);
  });
});
