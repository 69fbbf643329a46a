// The PostgreSQL driver wrapper's handling of a statement that carries the COMMIT (K-15.21), no server needed: a fake
// inner driver records what would go to the server.
import { CompiledQuery, type Driver } from 'kysely';
import { describe, expect, it } from 'vitest';
import { recordingConnection } from '../../internal/testing/recording-connection.js';
import { withCommit } from '../commit-ride.js';
import { TableMemo } from '../store-memo.js';
import { MemoDriver } from './memo-driver.js';

function fakeDriver(): { sent: string[]; driver: Driver } {
  const { sent, connection } = recordingConnection();
  const run = async (sql: string) => void sent.push(sql);
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: () => run('begin'),
    commitTransaction: () => run('commit'),
    rollbackTransaction: () => run('rollback'),
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  return { sent, driver };
}

describe('MemoDriver: the COMMIT that rides with a unit’s last statement', () => {
  it('[K-15.21] the marked statement carries the COMMIT; commitTransaction then sends nothing, reads still run', async () => {
    const { sent, driver } = fakeDriver();
    let leaseChecks = 0;
    const d = new MemoDriver(driver, new TableMemo(), 'postgres://db/libos?schema=s', () => void leaseChecks++);
    const c = await d.acquireConnection();
    await d.beginTransaction(c, {});
    await c.executeQuery(CompiledQuery.raw('savepoint libos_sp_0'));
    const checksBefore = leaseChecks;
    await c.executeQuery(withCommit(CompiledQuery.raw('insert into "events" ("id") values ($1)', ['evt_1'])));
    expect(leaseChecks).toBe(checksBefore + 1); // the lease is checked before the COMMIT goes
    await c.executeQuery(CompiledQuery.raw('savepoint libos_sp_1')); // a read after it, in a savepoint of its own
    await c.executeQuery(CompiledQuery.raw('select "n" from "t" where "a" = $1', [1]));
    await c.executeQuery(CompiledQuery.raw('release libos_sp_1'));
    await d.commitTransaction(c);
    expect(sent).toEqual([
      `begin; savepoint libos_sp_0; insert into "events" ("id") values ('evt_1'); commit`,
      'select "n" from "t" where "a" = $1',
    ]);
  });

  it('[K-15.21] a write after the COMMIT went is refused as internal_error, and nothing is sent for it', async () => {
    const { sent, driver } = fakeDriver();
    const d = new MemoDriver(driver, new TableMemo(), 'postgres://db/libos?schema=s');
    const c = await d.acquireConnection();
    await d.beginTransaction(c, {});
    await c.executeQuery(withCommit(CompiledQuery.raw('insert into "events" ("id") values ($1)', ['evt_1'])));
    await expect(c.executeQuery(CompiledQuery.raw('update "processes" set "status" = $1', ['exited']))).rejects.toMatchObject({
      code: 'internal_error',
      message: expect.stringContaining('wrote after its COMMIT'),
    });
    expect(sent).toHaveLength(1);
    await d.commitTransaction(c);
    await d.beginTransaction(c, {}); // the next transaction writes as usual
    await c.executeQuery(CompiledQuery.raw('update "processes" set "status" = $1', ['exited']));
    await d.commitTransaction(c);
    expect(sent.slice(1)).toEqual([
      'prepare libos_rt_0 as insert into "events" ("id") values ($1)', // the first transaction's text (K-15.29)
      `begin; update "processes" set "status" = 'exited'`,
      'commit',
    ]);
  });

  it('[K-15.21] a lease lost before the marked statement fails it before anything is sent', async () => {
    const { sent, driver } = fakeDriver();
    let lost = false;
    const d = new MemoDriver(driver, new TableMemo(), 'postgres://db/libos?schema=s', () => {
      if (lost) throw new Error('writer lease lost');
    });
    const c = await d.acquireConnection();
    await d.beginTransaction(c, {});
    await c.executeQuery(CompiledQuery.raw('update "t" set "a" = $1', [1]));
    lost = true;
    await expect(c.executeQuery(withCommit(CompiledQuery.raw('insert into "events" ("id") values ($1)', ['e'])))).rejects.toThrow(
      'writer lease lost',
    );
    await d.rollbackTransaction(c);
    expect(sent).toEqual([`begin; update "t" set "a" = '1'`, 'rollback']);
  });
});
