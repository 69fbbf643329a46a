// The PostgreSQL driver's deferred transaction control (deferred-control.ts, used by memo-driver.ts).
import { CompiledQuery, type DatabaseConnection } from 'kysely';
import { describe, expect, it } from 'vitest';
import { LibosError } from '@libos/sdk';
import { recordingConnection } from '../../internal/testing/recording-connection.js';
import { isDeferredMiss } from '../deferred-writes.js';
import { DeferredControl } from './deferred-control.js';

describe('deferred BEGIN and SAVEPOINT', () => {
  it('[K-15.19] BEGIN and the savepoints after it go in one round trip, before the first statement that must run', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    expect(c.take('savepoint libos_sp_0')).toBe(true);
    expect(c.take('savepoint libos_sp_1')).toBe(true);
    expect(c.take('select 1')).toBe(false);
    await c.send(connection);
    await c.send(connection); // nothing left
    expect(sent).toEqual(['begin; savepoint libos_sp_0; savepoint libos_sp_1']);
    expect(c.end()).toBe(false); // BEGIN went: the COMMIT must go too
  });

  it('[K-15.19] a savepoint released or rolled back to before anything ran in it is never sent', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    c.take('savepoint libos_sp_0');
    await c.send(connection);
    c.take('savepoint libos_sp_1');
    expect(c.take('release libos_sp_1')).toBe(true);
    c.take('savepoint libos_sp_2');
    expect(c.take('rollback to libos_sp_2')).toBe(true);
    expect(c.take('release libos_sp_2')).toBe(true);
    await c.send(connection);
    expect(sent).toEqual(['begin; savepoint libos_sp_0']);
  });

  it('[K-15.19] RELEASE of a sent savepoint is not sent; ROLLBACK TO one is, and drops the savepoints pending inside it', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    c.take('savepoint libos_sp_0');
    await c.send(connection);
    expect(c.take('release libos_sp_0')).toBe(true);
    c.take('savepoint libos_sp_1');
    await c.send(connection);
    c.take('savepoint libos_sp_2');
    expect(c.take('rollback to libos_sp_1')).toBe(false); // must run: statements ran in it
    await c.send(connection);
    expect(sent).toEqual(['begin; savepoint libos_sp_0', 'savepoint libos_sp_1']);
  });

  it('[K-15.19] a transaction in which nothing ran sends neither BEGIN nor its end', () => {
    const c = new DeferredControl();
    c.begin();
    c.take('savepoint libos_sp_0');
    c.take('release libos_sp_0');
    expect(c.end()).toBe(true);
    expect(new DeferredControl().end()).toBe(false); // no BEGIN of ours (kysely's own, with settings): end it
  });

  it('[K-15.19] only a bare SAVEPOINT, RELEASE or ROLLBACK TO is taken; anything else runs as it is', () => {
    const c = new DeferredControl();
    for (const sql of ['select 1', 'rollback', 'commit', 'savepoint a; select 1', 'insert into savepoint_log values (1)'])
      expect(c.take(sql)).toBe(false);
    expect(c.take('SAVEPOINT "x_1"')).toBe(true);
    expect(c.take('release savepoint x_1')).toBe(true);
  });

  it('[K-15.20] what is pending goes in the same query as the next statement, its parameters inlined', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    c.take('savepoint libos_sp_0');
    const update = { sql: 'update "t" set "a" = $1 where "b" = $2', parameters: ["it's", 1] } as unknown as CompiledQuery;
    await c.run(connection, update);
    await c.run(connection, update); // nothing pending: as it is
    expect(sent).toEqual([`begin; savepoint libos_sp_0; update "t" set "a" = 'it''s' where "b" = '1'`, update.sql]);
  });

  it('[K-15.20] a statement whose parameters cannot be inlined goes after the pending control, in its own query', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    await c.run(connection, CompiledQuery.raw('insert into "f" ("b") values ($1)', [Buffer.from('x')]));
    expect(sent).toEqual(['begin', 'insert into "f" ("b") values ($1)']);
    expect(c.end()).toBe(false);
  });

  it('[K-15.21] a last statement marked to carry the COMMIT sends it in the same query; the COMMIT then sends nothing', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    c.take('savepoint libos_sp_0');
    await c.run(connection, CompiledQuery.raw('update "t" set "a" = $1', ['x']));
    expect(c.committed).toBe(false);
    await c.run(connection, CompiledQuery.raw('insert into "e" ("a") values ($1)', ['y']), true);
    expect(sent).toEqual([`begin; savepoint libos_sp_0; update "t" set "a" = 'x'`, `insert into "e" ("a") values ('y'); commit`]);
    expect(c.committed).toBe(true);
    expect(c.end()).toBe(true); // committed: nothing left to send
    c.begin();
    expect(c.committed).toBe(false); // the next transaction starts uncommitted
  });

  it('[K-15.21] a transaction whose only statement carries the COMMIT is one round trip: BEGIN, statement, COMMIT', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    await c.run(connection, CompiledQuery.raw('insert into "e" ("a") values ($1)', [1]), true);
    expect(sent).toEqual([`begin; insert into "e" ("a") values ('1'); commit`]);
  });

  it('[K-15.21] a failed statement leaves the COMMIT unsent, so the caller rolls back; one not inlined leaves it to end', async () => {
    const c = new DeferredControl();
    c.begin();
    const failing: DatabaseConnection = {
      executeQuery: () => Promise.reject(new Error('duplicate key')),
      streamQuery: () => {
        throw new Error('not used');
      },
    };
    await expect(c.run(failing, CompiledQuery.raw('insert into "e" ("a") values ($1)', ['y']), true)).rejects.toThrow('duplicate key');
    expect(c.committed).toBe(false);
    expect(c.end()).toBe(false); // BEGIN went with it: ROLLBACK must go
    const { sent, connection } = recordingConnection();
    c.begin();
    await c.run(connection, CompiledQuery.raw('insert into "f" ("b") values ($1)', [Buffer.from('x')]), true);
    expect(sent).toEqual(['begin', 'insert into "f" ("b") values ($1)']);
    expect(c.committed).toBe(false);
    expect(c.end()).toBe(false); // COMMIT still to send
  });
});

describe('deferred guarded writes', () => {
  const guard = { rows: 1, error: () => new LibosError('conflict', 'account a changed concurrently') };
  const cas = CompiledQuery.raw('update "acc" set "n" = $1 where "id" = $2 and "n" = $3', [2, 'a', 1]);
  const guarded = (n: number) =>
    `with w as (update "acc" set "n" = '2' where "id" = 'a' and "n" = '1' returning 1) select case when (select count(*) from w) = 1 ` +
    `then 0 else ('libos_guard:${n}:' || (select count(*) from w))::int end`;

  it('[K-15.23] a guarded write goes with the next statement, after BEGIN and the savepoints held back before it', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    c.take('savepoint libos_sp_0');
    expect(c.defer(cas, guard)).toBe(true);
    expect(c.guarding).toBe(true);
    await c.run(connection, CompiledQuery.raw('insert into "e" ("a") values ($1)', ['y']), true);
    expect(sent).toEqual([`begin; savepoint libos_sp_0; ${guarded(0)}; insert into "e" ("a") values ('y'); commit`]);
    expect(c.guarding).toBe(false);
  });

  it('[K-15.23] the COMMIT carries a guarded write nothing else sent; a ROLLBACK TO before it drops it unsent', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    c.defer(cas, guard);
    await c.commit(connection);
    expect(sent).toEqual([`begin; ${guarded(0)}; commit`]);
    c.begin();
    c.take('savepoint libos_sp_0');
    c.defer(cas, guard);
    expect(c.take('rollback to libos_sp_0')).toBe(true);
    expect(c.guarding).toBe(false);
    expect(c.end()).toBe(true); // nothing ran: nothing to send
    expect(sent).toHaveLength(1);
  });

  it('[K-15.23] a savepoint released with a guarded write deferred inside it keeps the write: the COMMIT carries it', async () => {
    const { sent, connection } = recordingConnection();
    const c = new DeferredControl();
    c.begin();
    c.take('savepoint libos_sp_0');
    c.take('savepoint libos_sp_1');
    c.defer(cas, guard);
    c.take('savepoint libos_sp_2');
    expect(c.take('release libos_sp_1')).toBe(true); // releases libos_sp_2 with it
    expect(c.guarding).toBe(true);
    await c.commit(connection);
    expect(sent).toEqual([`begin; savepoint libos_sp_0; ${guarded(0)}; commit`]);
  });

  it("[K-15.23] a round trip failed by a guard throws that guard's error, marked a deferred miss; other errors pass", async () => {
    const failing = (message: string) => ({
      executeQuery: () => Promise.reject(new Error(message)),
      streamQuery: () => {
        throw new Error('not used');
      },
    });
    const c = new DeferredControl();
    c.begin();
    c.defer(cas, guard);
    const err = await c.send(failing('invalid input syntax for type integer: "libos_guard:0:0"')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LibosError);
    expect((err as LibosError).code).toBe('conflict');
    expect(isDeferredMiss(err)).toBe(true);
    c.end();
    c.begin();
    c.defer(cas, guard);
    const other = await c.send(failing('duplicate key')).catch((e: unknown) => e);
    expect((other as Error).message).toBe('duplicate key');
    expect(isDeferredMiss(other)).toBe(false);
  });

  it('[K-15.23] no transaction open, a RETURNING, or a parameter that cannot be inlined: the write runs now', () => {
    const c = new DeferredControl();
    expect(c.defer(cas, guard)).toBe(false); // autocommit: nothing to ride with
    c.begin();
    expect(c.defer(CompiledQuery.raw('update "acc" set "n" = $1 returning "n"', [2]), guard)).toBe(false);
    expect(c.defer(CompiledQuery.raw('update "acc" set "b" = $1', [Buffer.from('x')]), guard)).toBe(false);
    expect(c.guarding).toBe(false);
  });
});
