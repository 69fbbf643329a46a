// The PostgreSQL driver's deferred transaction control (deferred-control.ts, used by memo-driver.ts).
import { CompiledQuery, type DatabaseConnection } from 'kysely';
import { describe, expect, it } from 'vitest';
import { recordingConnection } from '../../internal/testing/recording-connection.js';
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
