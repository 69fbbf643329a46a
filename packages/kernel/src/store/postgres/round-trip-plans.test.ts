// Texts a connection prepares for the statements that ride in a round trip of several (round-trip-plans.ts, used by
// deferred-control.ts), no server needed: a recording connection stands in, and refuses what a test makes it refuse.
import { CompiledQuery, type DatabaseConnection, type QueryResult } from 'kysely';
import { LibosError } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { recordingConnection } from '../../internal/testing/recording-connection.js';
import { DeferredControl } from './deferred-control.js';
import { RoundTripPlans } from './round-trip-plans.js';

const UPDATE = 'update "t" set "a" = $1 where "b" = $2';

/** A connection that records what it is sent and fails a query `fail` returns an error for. */
function failingConnection(fail: (sql: string) => Error | undefined): { sent: string[]; connection: DatabaseConnection } {
  const { sent, connection } = recordingConnection();
  return {
    sent,
    connection: {
      ...connection,
      executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
        const err = fail(q.sql);
        return err ? Promise.reject(err) : connection.executeQuery<R>(q);
      },
    },
  };
}

/**
 * A connection that runs a query's `prepare <name> as <text>` statements in order as a server would: a name taken is
 * 42P05, a text `refuses` matches is refused, and either ends the query there (what ran before it stays prepared).
 */
function fakeServer(refuses: (text: string) => boolean) {
  const sent: string[] = [];
  const prepared = new Set<string>();
  const connection: DatabaseConnection = {
    async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
      sent.push(q.sql);
      for (const statement of q.sql.split('; ')) {
        const [, name, text] = /^prepare (\w+) as (.*)$/s.exec(statement)!;
        if (prepared.has(name!)) throw serverError(`prepared statement "${name}" already exists`, '42P05');
        if (refuses(text!)) throw serverError('inconsistent types deduced for parameter $1', '42P08');
        prepared.add(name!);
      }
      return { rows: [] };
    },
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  return { sent, connection, prepared };
}

/** An error as `pg` makes of a server's error response (it carries a severity). */
const serverError = (message: string, code: string) => Object.assign(new Error(message), { severity: 'ERROR', code });

describe('[K-15.29] texts prepared for the statements of a round trip', () => {
  it('[K-15.29] a text goes inline the first time; once prepared it goes as execute, its literals the same', async () => {
    const { sent, connection } = recordingConnection();
    const plans = new RoundTripPlans();
    expect(plans.render(UPDATE, ["it's", 2])).toBe(`update "t" set "a" = 'it''s' where "b" = '2'`);
    expect(plans.wanting).toBe(true);
    await plans.prepareWanted(connection);
    expect(sent).toEqual([`prepare libos_rt_0 as ${UPDATE}`]);
    expect(plans.wanting).toBe(false);
    expect(plans.render(UPDATE, ['a\\b', null])).toBe(`execute libos_rt_0( E'a\\\\b', NULL)`);
    expect(plans.render('select 1', [])).toBe('select 1'); // no parameters: never prepared
    expect(plans.render(UPDATE, [{ not: 'a literal' }, 1])).toBeUndefined(); // sent as it is, as K-15.20 says
    await plans.prepareWanted(connection);
    expect(sent).toHaveLength(1);
  });

  it('[K-15.29] a text the server refuses to prepare, or whose placeholders miss a parameter, goes inline from then on', async () => {
    const refused = 'select * from "t" where "a" = $1 or "b" = $1';
    const { sent, connection, prepared } = fakeServer((text) => text.includes('"b" = $1'));
    const plans = new RoundTripPlans();
    plans.render(UPDATE, [1, 2]);
    plans.render(refused, [5]);
    plans.render('select $1', [1, 2]); // two parameters, one placeholder: `execute` would pass one too many
    plans.render('select "c" from "t" where "a" = $1', [3]);
    await plans.prepareWanted(connection);
    // All in one query, which the refusal failed after the first; then each alone: the first is there already.
    expect(sent).toEqual([
      `prepare libos_rt_0 as ${UPDATE}; prepare libos_rt_1 as ${refused}; prepare libos_rt_2 as select "c" from "t" where "a" = $1`,
      `prepare libos_rt_0 as ${UPDATE}`,
      `prepare libos_rt_1 as ${refused}`,
      'prepare libos_rt_2 as select "c" from "t" where "a" = $1',
    ]);
    expect([...prepared]).toEqual(['libos_rt_0', 'libos_rt_2']);
    expect(plans.render(refused, [6])).toBe(`select * from "t" where "a" = '6' or "b" = '6'`);
    expect(plans.render('select $1', [1, 2])).toBe(`select '1'`);
    expect(plans.render(UPDATE, [1, 2])).toBe(`execute libos_rt_0('1', '2')`);
    expect(plans.render('select "c" from "t" where "a" = $1', [3])).toBe(`execute libos_rt_2('3')`);
    expect(plans.wanting).toBe(false); // neither is wanted again
  });

  it('[K-15.29] a lost connection fails the preparation and the text stays wanted', async () => {
    let lost = true;
    const { sent, connection } = failingConnection(() => (lost ? new Error('Connection terminated unexpectedly') : undefined));
    const plans = new RoundTripPlans();
    plans.render(UPDATE, [1, 2]);
    await expect(plans.prepareWanted(connection)).rejects.toThrow('Connection terminated unexpectedly');
    expect(plans.wanting).toBe(true);
    lost = false;
    await plans.prepareWanted(connection);
    expect(sent).toEqual([`prepare libos_rt_1 as ${UPDATE}`]);
    expect(plans.render(UPDATE, [1, 2])).toBe(`execute libos_rt_1('1', '2')`);
  });

  it('[K-15.29] a plan refused because a table changed shape forgets every name: each text is prepared anew', async () => {
    const { sent, connection } = recordingConnection();
    const plans = new RoundTripPlans();
    plans.render(UPDATE, [1, 2]);
    await plans.prepareWanted(connection);
    plans.failed(serverError('duplicate key value violates unique constraint', '23505')); // any other failure: kept
    expect(plans.render(UPDATE, [1, 2])).toBe(`execute libos_rt_0('1', '2')`);
    plans.failed(serverError('cached plan must not change result type', '0A000'));
    expect(plans.render(UPDATE, [1, 2])).toBe(`update "t" set "a" = '1' where "b" = '2'`);
    await plans.prepareWanted(connection);
    expect(sent).toEqual([`prepare libos_rt_0 as ${UPDATE}`, `prepare libos_rt_1 as ${UPDATE}`]);
  });

  it('[K-15.29] at most limit texts are prepared on a connection; past that a new text goes inline', async () => {
    const { sent, connection } = recordingConnection();
    const plans = new RoundTripPlans(2);
    for (const n of [1, 2, 3]) plans.render(`select "c${n}" from "t" where "a" = $1`, [n]);
    await plans.prepareWanted(connection);
    expect(sent).toEqual([
      'prepare libos_rt_0 as select "c1" from "t" where "a" = $1; prepare libos_rt_1 as select "c2" from "t" where "a" = $1',
    ]);
    expect(plans.render('select "c3" from "t" where "a" = $1', [3])).toBe(`select "c3" from "t" where "a" = '3'`);
    expect(plans.wanting).toBe(false);
  });

  it('[K-15.29] a transaction prepares only while its BEGIN is held back, before it, never inside an open one', async () => {
    const { sent, connection } = recordingConnection();
    const plans = new RoundTripPlans();
    const c = new DeferredControl(plans);
    const READ = 'select "x" from "t" where "a" = $1';
    c.begin();
    await c.run(connection, CompiledQuery.raw(UPDATE, [1, 2])); // inline with BEGIN; wanted
    c.take('savepoint libos_sp_0');
    await c.run(connection, CompiledQuery.raw(READ, [5])); // the transaction is open on the server: no PREPARE now
    c.end();
    c.begin();
    c.take('savepoint libos_sp_0');
    await c.run(connection, CompiledQuery.raw(UPDATE, [3, 4]));
    c.end();
    expect(sent).toEqual([
      `begin; update "t" set "a" = '1' where "b" = '2'`,
      `savepoint libos_sp_0; select "x" from "t" where "a" = '5'`,
      `prepare libos_rt_0 as ${UPDATE}; prepare libos_rt_1 as ${READ}`, // every wanted text in one round trip
      `begin; savepoint libos_sp_0; execute libos_rt_0('3', '4')`,
    ]);
  });

  it('[K-15.29] a guarded write held back goes as execute of its prepared guard statement', async () => {
    const { sent, connection } = recordingConnection();
    const plans = new RoundTripPlans();
    const c = new DeferredControl(plans);
    const guard = { rows: 1, error: () => new LibosError('conflict', 'missed') };
    for (const usage of [1, 2]) {
      c.begin();
      expect(c.defer(CompiledQuery.raw(UPDATE, [usage, 'p']), guard)).toBe(true);
      await c.commit(connection);
    }
    // Rendered inline when held back, and wanted: prepared before the BEGIN it was held back with goes.
    expect(sent[0]).toMatch(/^prepare libos_rt_0 as with w as \(update "t" set "a" = \$1 where "b" = \$2 returning 1\) select case /);
    expect(sent[1]).toMatch(/^begin; with w as \(update "t" set "a" = '1' where "b" = 'p' returning 1\) select case .*; commit$/);
    expect(sent[2]).toBe(`begin; execute libos_rt_0('2', 'p'); commit`);
  });
});
