import type { Decision, Right } from '@libos/sdk';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { callOk as ok, memoHarness } from './support/memo-harness.js';

// K-9.28 on a real SQLite file store: a process with few grants has them read whole once and matched in memory for
// every resource it checks, until `cap_grants` changes; one with more keeps a probe per resource; both decide the
// same. K-9.30: a grant to a process whose set is held is written through. The grant reads are counted where the
// kernel runs them, on better-sqlite3's statements.

const SKILL = 'agent-libos-object-memory';
const WHOLE = /^select \* from "cap_grants" where "subject" = \? order by/;
const PROBE = /^select \* from "cap_grants" where "subject" = \? and "resource" in/;
/** The most rows a subject read whole may have (`SUBJECT_READ_WHOLE_MOST` in @libos/capabilities), and more. */
const BOUND = 64;
const MORE_THAN_THE_BOUND = 70;

const h = memoHarness('libos-subject-grants-');
const open = h.open;

/** Counts the whole-subject reads and the per-resource probes of `cap_grants` every connection opened from now runs. */
function countGrantReads(): { readonly whole: number; readonly probe: number } {
  const whole = h.countStatements(WHOLE);
  const probe = h.countStatements(PROBE);
  return {
    get whole() {
      return whole.get('all') ?? 0;
    },
    get probe() {
      return probe.get('all') ?? 0;
    },
  };
}

/** A decision without the ids that differ between two processes' own grants and Objects. */
function shape(d: Decision) {
  return {
    allowed: d.allowed,
    effect: d.effect,
    matched: d.matchedIds.length,
    selected: d.selectedId !== undefined,
    finite: d.consumeId !== undefined,
    reason: d.reason.replace(/\b(cap|pid|obj)_[\w:./*-]+/g, '$1_'),
  };
}

describe('a subject read whole (K-9.28)', () => {
  it('[K-9.28] appends to five Objects read the grants once; a grant makes the next check read them again', async () => {
    const reads = countGrantReads();
    const rt = await open();
    const { pid } = await rt.spawn({ goal: 'g' });
    await rt.activateSkill(pid, SKILL);
    for (let i = 0; i < 5; i++)
      await ok(rt, pid, 'create_memory_object', { type: 'plan', name: `l${i}`, payload: { entries: [] }, immutable: false });
    const other = await rt.spawn({ goal: 'another' });
    await rt.grant(other.pid, 'clock:now', ['read']); // a write of cap_grants: what was read of them is stale
    const before = { ...reads };
    for (let i = 0; i < 5; i++) await ok(rt, pid, 'append_memory_object', { name: `l${i}`, entry: i });
    expect(reads.whole - before.whole).toBe(1);
    expect(reads.probe - before.probe).toBe(0);
    await rt.grant(other.pid, 'clock:later', ['read']); // another subject's grant again
    await ok(rt, pid, 'append_memory_object', { name: 'l0', entry: 'again' });
    expect(reads.whole - before.whole).toBe(2);
    expect(reads.probe - before.probe).toBe(0);
  });

  it('[K-9.28] a process with more grants than the bound probes per resource and decides as one read whole', async () => {
    const reads = countGrantReads();
    const rt = await open();
    const setUp = async (filler: number) => {
      const { pid } = await rt.spawn({ goal: 'g' });
      await rt.activateSkill(pid, SKILL);
      const { oid } = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'own', payload: { entries: [] }, immutable: false });
      // An owner record revoked is stored (revoked): it replaces the implicit one, so the owner loses its rights.
      const gone = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'gone', payload: { entries: [] }, immutable: false });
      await rt.revoke(`cap_own:object:${gone.oid}`);
      await rt.grant(pid, 'object:*', ['link']);
      await rt.grant(pid, 'fs:/work/*', ['read', 'write']);
      await rt.grant(pid, 'fs:/work/secret', ['read'], { effect: 'deny' });
      await rt.grant(pid, 'clock:now', ['read'], { uses: 1 });
      await rt.revoke((await rt.grant(pid, 'net:example.org', ['read'])).id);
      for (let i = 0; i < filler; i++) await rt.grant(pid, `clock:filler_${i}`, ['read']);
      return { pid, oid, gone: gone.oid };
    };
    const few = await setUp(0);
    const many = await setUp(MORE_THAN_THE_BOUND);
    const cases: [string, Right][] = [
      ['object:OWN', 'write'],
      ['object:OWN', 'link'],
      ['object:OWN', 'admin'],
      ['object:GONE', 'write'],
      ['object:GONE', 'link'],
      ['object:other', 'link'],
      ['object:other', 'read'],
      ['fs:/work/a.txt', 'write'],
      ['fs:/work/secret', 'read'],
      ['fs:/home/x', 'read'],
      ['clock:now', 'read'],
      ['net:example.org', 'read'],
    ];
    const decide = ({ pid, oid, gone }: { pid: string; oid: string; gone: string }) =>
      rt.transaction(async (scope) => {
        const out = [];
        for (const [resource, right] of cases)
          out.push(shape(await scope.authorityFor(pid).check(resource.replace('OWN', oid).replace('GONE', gone), right)));
        return out;
      });
    const start = { ...reads };
    const small = await decide(few);
    const mid = { ...reads };
    const large = await decide(many);
    expect(large).toEqual(small);
    expect(small.filter((d) => d.allowed).length).toBeGreaterThan(2); // the cases decide both ways
    expect(small.filter((d) => !d.allowed).length).toBeGreaterThan(2);
    expect(mid.probe - start.probe).toBe(0); // the small subject was matched in memory
    expect(reads.probe - mid.probe).toBe(new Set(cases.map(([r]) => r)).size); // the large one probed each resource once
  });
});

describe("a grant written through to its subject's set (K-9.30)", () => {
  /** A check as `pid` in a host transaction. */
  const check = (rt: Awaited<ReturnType<typeof open>>, pid: string, resource: string, right: Right) =>
    rt.transaction((scope) => scope.authorityFor(pid).check(resource, right));

  it('[K-9.30] a grant to a process whose grants are held is checked without reading them again, and decides', async () => {
    const reads = countGrantReads();
    const rt = await open();
    const { pid } = await rt.spawn({ goal: 'g' });
    expect((await check(rt, pid, 'clock:now', 'read')).allowed).toBe(false);
    const start = { ...reads };
    const granted = await rt.grant(pid, 'clock:now', ['read']);
    await rt.grant(pid, 'fs:/work/secret', ['read'], { effect: 'deny' });
    const now = await check(rt, pid, 'clock:now', 'read');
    expect(now.allowed).toBe(true);
    expect(now.selectedId).toBe(granted.id);
    expect((await check(rt, pid, 'fs:/work/secret', 'read')).allowed).toBe(false);
    expect((await check(rt, pid, 'clock:later', 'read')).allowed).toBe(false);
    expect(reads.whole - start.whole).toBe(0);
    expect(reads.probe - start.probe).toBe(0);
    // The set written through is the one a read finds: a revoke (an update) makes the next check read it.
    await rt.revoke(granted.id);
    expect((await check(rt, pid, 'clock:now', 'read')).allowed).toBe(false);
    expect(reads.whole - start.whole).toBe(1);
  });

  it('[K-9.30] a grant issued in the same millisecond is written through only when its id sorts last', async () => {
    const reads = countGrantReads();
    let n = 0x8000;
    // Ids counting down: each grant's id sorts before the one issued in the same millisecond before it.
    const down = { next: (prefix: string) => `${prefix}_${(n--).toString(16).padStart(16, '0')}` };
    for (const [ids, readsAfter] of [
      [undefined, 0],
      [down, 1],
    ] as const) {
      const rt = await open({ clock: { now: () => new Date('2031-01-01T00:00:00.000Z') }, ...(ids ? { ids } : {}) });
      const { pid } = await rt.spawn({ goal: 'g' });
      const a = await rt.grant(pid, 'clock:a', ['read']);
      expect((await check(rt, pid, 'clock:a', 'read')).allowed).toBe(true);
      const start = { ...reads };
      const b = await rt.grant(pid, 'clock:b', ['read']);
      expect(b.issuedAt).toBe(a.issuedAt);
      expect((await check(rt, pid, 'clock:b', 'read')).allowed).toBe(true);
      expect((await check(rt, pid, 'clock:a', 'read')).allowed).toBe(true);
      expect(reads.whole - start.whole).toBe(readsAfter);
    }
  });

  it('[K-9.30] a grant that takes a process past the bound is not written through: its checks probe from then on', async () => {
    const reads = countGrantReads();
    const rt = await open();
    const { pid } = await rt.spawn({ goal: 'g' });
    const rows = () =>
      rt.transaction(async (scope) => {
        const r = await sql<{ n: number }>`select count(*) as n from cap_grants where subject = ${pid}`.execute(scope.store);
        return Number(r.rows[0]!.n);
      });
    for (let i = await rows(); i < BOUND; i++) await rt.grant(pid, `clock:filler_${i}`, ['read']);
    expect(await rows()).toBe(BOUND);
    expect((await check(rt, pid, 'clock:now', 'read')).allowed).toBe(false); // held whole: at the bound
    const start = { ...reads };
    await rt.grant(pid, 'clock:now', ['read']);
    expect((await check(rt, pid, 'clock:now', 'read')).allowed).toBe(true);
    expect(reads.whole - start.whole).toBe(1); // read again: 65 rows, one too many to hold
    expect(reads.probe - start.probe).toBe(1);
  });
});
