// Round trips a unit of work costs on PostgreSQL (K-15.19, K-15.20, K-15.21, K-15.23): the driver defers BEGIN and
// SAVEPOINT, and a guarded budget update, and sends them in one query with the first statement that must run (its
// parameters inlined), drops savepoints nothing ran in and never sends RELEASE; the events and audit records go in
// one statement that carries the COMMIT.
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, isPrepareTrip, PG_URL, probePostgres, watchQueries } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_trips');

/** Every query text `pg` sends while `fn` runs. */
async function sentDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  await watchQueries(fn, (text) => sent.push(text));
  return sent;
}

describe.skipIf(unavailable !== null)('[K-15.19] round trips of a unit of work on PostgreSQL', () => {
  let rt: Runtime | undefined;
  afterAll(async () => {
    await rt?.close();
    await dropSchema(schema);
  });

  it('[K-15.19] [K-15.23] a warm checked call is one query: BEGIN, savepoint, guarded budget update, rows, COMMIT', async () => {
    rt = await openRuntime({ path: url, plugins: [capabilities(), session()] });
    const p = await rt.spawn({ goal: 'round trips', budget: { tool_calls: 100 } });
    await rt.grant(p.pid, 'clock:now', ['read']);
    expect((await rt.call(p.pid, 'get_current_time', {})).ok).toBe(true);
    expect((await rt.call(p.pid, 'get_current_time', {})).ok).toBe(true); // warm: its texts prepared (K-15.29)
    const sent = await sentDuring(() => rt!.call(p.pid, 'get_current_time', {}));
    const charge = /^begin; savepoint \w+; with w as \(update "cap_budget_accounts" .* returning 1\) select [^;]*; /s;
    const rows = /with e as \(insert into "events" .* a as \(insert into "audit_records" .*; commit$/s;
    expect(sent).toEqual([expect.stringMatching(new RegExp(charge.source + rows.source, 's'))]);
    expect(sent[0]!.match(/\bsavepoint\b/gi)).toHaveLength(1);
    expect(sent[0]).not.toMatch(/\brelease\b/i);
    expect((await rt.budget(p.pid)).usage.tool_calls).toBe(3);
    const events = await rt.events({ pid: p.pid, limit: 100 });
    const audit = await rt.audit({ pid: p.pid, limit: 100 });
    expect(audit.filter((r) => r.action === 'tool.call').map((r) => r.decision)).toEqual(['ok', 'ok', 'ok']);
    expect(events.filter((e) => e.type === 'resource.charged')).toHaveLength(3);
  });

  it('[K-15.21] rows written with the COMMIT read back exactly, and a watcher gets the seqs they were stored under', async () => {
    const tricky = `it's \\ "q" \u0000 nul \u0000 lone \ud800 😀 $1 -- /* E'x'`;
    const seen: { seq: number; id: string }[] = [];
    const stop = rt!.watch({ event: (e) => seen.push({ seq: e.seq, id: e.id }) });
    const sent = await sentDuring(() =>
      rt!.transaction(async (scope) => {
        await scope.events.emit('k21.probe', { text: tricky, n: 1 });
        await scope.audit.record({ action: 'k21.probe', target: tricky, details: { text: tricky } });
      }),
    );
    stop();
    expect(sent).toEqual([expect.stringMatching(/^begin; with e as \(insert into "events" .*; commit$/s)]);
    const [event] = await rt!.events({ type: 'k21.probe', limit: 10 });
    const [record] = await rt!.audit({ action: 'k21.probe', limit: 10 });
    expect(event!.data).toEqual({ text: tricky, n: 1 });
    expect(record!.target).toBe(tricky);
    expect(record!.details).toEqual({ text: tricky });
    expect(seen).toEqual([{ seq: event!.seq, id: event!.id }]);
  });

  it('[K-15.20] [K-15.29] values inlined into the query that carries BEGIN, or prepared, are stored and read back exactly', async () => {
    const values = [
      "it's",
      'back\\slash \\n',
      '{"a":"\\u0000 \\ud800"}',
      'nul \u0000 lone \ud800 mark \uffff',
      'emoji 😀 é',
      "$1 $$ E'x' -- /*",
      '',
    ];
    const trips: string[][] = [];
    for (const [i, value] of values.entries()) {
      const sent: string[] = [];
      await watchQueries(
        () => rt!.transaction((scope) => sql`insert into libos_meta (key, value) values (${`k20_${i}`}, ${value})`.execute(scope.store)),
        (text) => sent.push(text),
        true,
      );
      trips.push(sent);
    }
    // The first goes inline with BEGIN (K-15.20); the second has the text prepared first, in a round trip of its own;
    // from then on each executes it with the values as its arguments, still with BEGIN (K-15.29).
    expect(trips[0]).toEqual([expect.stringMatching(/^begin; insert into libos_meta .*values \('k20_0', 'it''s'\)$/), 'commit']);
    expect(trips[1]!.slice(0, 2)).toEqual([
      expect.stringMatching(/^prepare libos_rt_\d+ as insert into libos_meta .*values \(\$1, \$2\)$/),
      expect.stringMatching(/^begin; execute libos_rt_\d+\('k20_1', /),
    ]);
    for (const [i, t] of trips.slice(2).entries())
      expect(t).toEqual([expect.stringMatching(`^begin; execute libos_rt_\\d+\\('k20_${i + 2}', `), 'commit']);
    const rows = await rt!.transaction((scope) =>
      scope.store.selectFrom('libos_meta').select(['key', 'value']).where('key', 'like', 'k20_%').orderBy('key').execute(),
    );
    expect(rows.map((r) => r.value)).toEqual(values);
    const echoed = await rt!.transaction(async (scope) => {
      const r = await sql<{
        n: number;
        b: boolean;
        t: string;
      }>`select ${2.5}::float8 as n, ${true}::boolean as b, ${'x'}::text as t`.execute(scope.store);
      return r.rows[0];
    });
    expect(echoed).toEqual({ n: 2.5, b: true, t: 'x' });
  });

  it('[K-15.19] [K-15.21] a denied call still commits its failure record, with its COMMIT, and sends no RELEASE', async () => {
    const p = await rt!.spawn({ goal: 'denied', budget: { tool_calls: 100 } });
    const sent = (await sentDuring(() => rt!.call(p.pid, 'get_current_time', {}))).filter((q) => !isPrepareTrip(q));
    const denied = await rt!.audit({ pid: p.pid, action: 'tool.call', limit: 10 });
    expect(denied.map((r) => r.decision)).toEqual(['permission_denied']);
    expect(sent.filter((q) => /^\s*release\b/i.test(q))).toEqual([]);
    // The failure record (its guarded charge first, K-15.23) carries the COMMIT.
    expect(sent.at(-1)).toMatch(/^(with w as \(update "cap_budget_accounts" .*; )?with e as \(insert into "events" .*; commit$/s);
    expect(sent.filter((q) => /^\s*commit\s*$/i.test(q))).toEqual([]);
  });
});
