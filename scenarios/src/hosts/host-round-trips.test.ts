// Round trips of a host's scheduling on a shared PostgreSQL store (K-15.26): a claim round is one query (its
// statements run as one transaction on the server), a model call's llm_calls row rides with the next statement, and
// a unit of work locks its tree once: a quantum's unit takes the tree's lock with its lease check (`holdTree`,
// K-15.25) and the tool calls it makes for its own process send no second `FOR UPDATE` of the root row; a call from
// another host still locks the tree first (K-15.16). A prompt text already stored is not sent again (K-15.28).
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, isPrepareTrip, PG_URL, probePostgres, watchQueries } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_host_trips');
const open = (id: string) =>
  openRuntime({ path: url, plugins: [capabilities(), objectMemory(), session()], host: { id, leaseMs: 60_000 } });
const SCRIPT = { processes: { '*': [[{ tool: 'get_current_time', args: {} }], [{ tool: 'process_exit', args: { message: 'done' } }]] } };

/** Keeps what ran: a PREPARE (K-15.29, once per text and connection) only names a statement, run later as the text. */
const ran = (sent: string[]) => (text: string) => void (isPrepareTrip(text) || sent.push(text));

/** The statements that lock a tree's root row: a quantum unit's lease check (hold) and a call's plain lock. */
const HOLD = /for update of r for key share of l/;
const LOCK = /select 1 from processes where pid = \(select root_pid from processes where pid = .*\) for update/s;
/** The claim's statements: lease rows for new roots, then the claim itself. */
const CLAIM = /update libos_tree_leases t set host_id/;
const NEW_ROOTS = /insert into libos_tree_leases/;
/** A round's other reads: the runnable processes of the host's trees, and the store's earliest timer. */
const OWN_RUNNABLE = /where p\.status = 'runnable' and/;
const EARLIEST_TIMER = /select "?wait_deadline"? from "?processes"? where "?wait_kind"? = /;

describe.skipIf(unavailable !== null)('[K-15.26] round trips of a host scheduling its trees', () => {
  const opened: Runtime[] = [];
  afterAll(async () => {
    for (const rt of opened) await rt.close().catch(() => undefined);
    await dropSchema(schema);
  });

  it('[K-15.26] a claim round is one query; a quantum that calls tools holds its tree once per unit, no second lock', async () => {
    const host = await open('locks-a');
    const other = await open('locks-b');
    opened.push(host, other);
    const p = await host.spawn({ goal: 'tell the time', budget: { tool_calls: 10 } });
    await host.grant(p.pid, 'clock:now', ['read']);
    const sent: string[] = [];
    const r = await watchQueries(() => host.run({ provider: new ScriptedProvider(SCRIPT) }), ran(sent));
    expect(r.results.flatMap((q) => q.executed)).toEqual(['get_current_time', 'process_exit']);
    expect(r.results.flatMap((q) => q.results.map((x) => x.ok))).toEqual([true, true]);
    // Two quanta of two units each (turn start; reply and its tool calls): one hold per unit, no plain lock.
    expect(sent.filter((q) => HOLD.test(q))).toHaveLength(4);
    expect(sent.filter((q) => LOCK.test(q))).toEqual([]);
    // Each scheduling round claims in one query, both statements in it, and sends no COMMIT of its own.
    const claims = sent.filter((q) => CLAIM.test(q) || NEW_ROOTS.test(q));
    expect(claims.length).toBeGreaterThan(0);
    expect(claims.every((q) => CLAIM.test(q) && NEW_ROOTS.test(q))).toBe(true);
    const afterClaims = sent.filter((_, i) => i > 0 && CLAIM.test(sent[i - 1]!));
    expect(afterClaims.filter((q) => /^\s*commit\s*;?\s*$/i.test(q))).toEqual([]);
    // The same query reads the round's runnable set and the earliest timer (K-15.27): no round trip of their own.
    expect(claims.every((q) => OWN_RUNNABLE.test(q) && EARLIEST_TIMER.test(q))).toBe(true);
    expect(sent.filter((q) => !CLAIM.test(q) && (OWN_RUNNABLE.test(q) || EARLIEST_TIMER.test(q)))).toEqual([]);
    // Each model call's llm_calls row rides with the unit's next statement, never a round trip of its own.
    const llmRows = sent.filter((q) => q.includes('insert into "llm_calls"'));
    expect(llmRows).toHaveLength(2);
    expect(llmRows.every((q) => /with w as \(insert into "llm_calls" .*returning 1\) select case .*; \S/s.test(q))).toBe(true);
    expect((await host.process(p.pid))?.status).toBe('exited');
    const calls = await host.audit({ pid: p.pid, action: 'tool.call', limit: 10 });
    expect(calls.map((c) => c.decision)).toEqual(['ok', 'ok']);
  });

  it.each([
    ['comes due while the round runs', 0.001],
    ['lies ahead when nothing else can run', 0.3],
  ])('[K-15.27] a sleeper on a host wakes when its timer %s, read with the claim', async (_, seconds) => {
    const host = opened[0]!;
    const p = await host.spawn({ goal: `sleep ${seconds} s, then exit`, budget: { tool_calls: 10 } });
    await host.grant(p.pid, 'clock:sleep', ['read']);
    const script = { processes: { '*': [[{ tool: 'sleep', args: { seconds } }], [{ tool: 'process_exit', args: { message: 'slept' } }]] } };
    const sent: string[] = [];
    const r = await watchQueries(() => host.run({ provider: new ScriptedProvider(script) }), ran(sent));
    expect(r.idle).toBe(true);
    expect(r.results.flatMap((q) => q.executed)).toEqual(['sleep', 'sleep', 'process_exit']);
    expect((await host.process(p.pid))?.status).toBe('exited');
    const calls = await host.audit({ pid: p.pid, action: 'tool.call', limit: 10 });
    expect(calls.map((c) => c.decision)).toEqual(['waiting', 'ok', 'ok']);
    // Every earliest-timer read rode with a claim round; the wake itself is one transaction of its own.
    expect(sent.filter((q) => !CLAIM.test(q) && EARLIEST_TIMER.test(q))).toEqual([]);
    expect(sent.filter((q) => CLAIM.test(q)).length).toBeGreaterThanOrEqual(3);
  });

  it('[K-15.28] a host sends each stored prompt text once: later quanta and processes name it by key alone', async () => {
    const host = await open('texts-a');
    opened.push(host);
    const sent: string[] = [];
    const pids: string[] = [];
    for (const goal of ['first', 'second', 'third']) {
      const p = await host.spawn({ goal: `tell the time (${goal})`, budget: { tool_calls: 10 } });
      pids.push(p.pid);
      await host.grant(p.pid, 'clock:now', ['read']);
      const r = await watchQueries(() => host.run({ provider: new ScriptedProvider(SCRIPT) }), ran(sent));
      expect(r.results.flatMap((q) => q.executed)).toEqual(['get_current_time', 'process_exit']);
    }
    // The keys each llm_texts insert carries (its parameters go inline, after the unit's deferred savepoint).
    const inserts = sent.filter((q) => q.includes('insert into "llm_texts"'));
    expect(inserts.length).toBeGreaterThan(0);
    expect(inserts.every((q) => !/\$\d/.test(q.slice(q.indexOf('insert into "llm_texts"'))))).toBe(true);
    const keys = inserts.flatMap((q) =>
      [...q.slice(q.indexOf('insert into "llm_texts"')).matchAll(/\('([\w-]{22,43})', /g)].map((m) => m[1]!),
    );
    expect(keys.length).toBeGreaterThan(0);
    // Before K-15.28 the memo of a shared store lasted one transaction, so every quantum sent its prompt's stored
    // texts again (~16 KB) for the server to skip.
    expect(keys.length).toBe(new Set(keys).size);
    // And every prompt reads back whole from what was stored.
    for (const [i, pid] of pids.entries()) {
      const calls = await host.llmCalls({ pid });
      expect(calls).toHaveLength(2);
      for (const c of calls) expect(JSON.stringify(c.request)).toContain(`tell the time (${['first', 'second', 'third'][i]})`);
    }
  });

  it('[K-15.26] a call from another host still locks the tree first', async () => {
    const [host, other] = opened as [Runtime, Runtime];
    const p = await host.spawn({ goal: 'called from elsewhere', budget: { tool_calls: 10 } });
    await host.grant(p.pid, 'clock:now', ['read']);
    const sent: string[] = [];
    const r = await watchQueries(() => other.call(p.pid, 'get_current_time', {}), ran(sent));
    expect(r.ok).toBe(true);
    expect(sent.filter((q) => LOCK.test(q))).toHaveLength(1);
    expect(sent.filter((q) => HOLD.test(q))).toEqual([]);
  });
});
