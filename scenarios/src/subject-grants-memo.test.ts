import type { Decision, Right } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { callOk as ok, memoHarness } from './support/memo-harness.js';

// K-9.28 on a real SQLite file store: a process with few grants has them read whole once and matched in memory for
// every resource it checks, until `cap_grants` changes; one with more keeps a probe per resource; both decide the
// same. The grant reads are counted where the kernel runs them, on better-sqlite3's statements.

const SKILL = 'agent-libos-object-memory';
const WHOLE = /^select \* from "cap_grants" where "subject" = \? order by/;
const PROBE = /^select \* from "cap_grants" where "subject" = \? and "resource" in/;
/** More grants than a subject read whole may have (64, `SUBJECT_READ_WHOLE_MOST` in @libos/capabilities). */
const MORE_THAN_THE_BOUND = 70;

const h = memoHarness('libos-subject-grants-');
const open = () => h.open();

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
    await rt.grant(pid, 'clock:now', ['read']); // a write of cap_grants: what was read of them is stale
    const before = { ...reads };
    for (let i = 0; i < 5; i++) await ok(rt, pid, 'append_memory_object', { name: `l${i}`, entry: i });
    expect(reads.whole - before.whole).toBe(1);
    expect(reads.probe - before.probe).toBe(0);
    await rt.grant(pid, 'clock:later', ['read']);
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
