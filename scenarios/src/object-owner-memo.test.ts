import { describe, expect, it } from 'vitest';
import { callOk as ok, memoHarness } from './support/memo-harness.js';

// K-9.16 on a real SQLite file store: an Object's owner, found by its oid, stays in the store memo while other
// Objects are created, and an update of the Object's row is seen by the very next check. The owner lookups are
// counted where the kernel runs them, on better-sqlite3's statements (a file store, so SQLite only).

const SKILL = 'agent-libos-object-memory';
const OWNER_LOOKUP = /^select "oid", "owner_id", "immutable", "created_at" from "om_objects" where "oid" = \?$/;

const h = memoHarness('libos-owner-memo-');
/** Counts, per oid, the owner lookups every connection opened from now on runs. */
const countOwnerLookups = () => h.countStatements(OWNER_LOOKUP, (args) => String(args[0]));
const open = () => h.open();

describe('an Object owner found by key (K-9.16)', () => {
  it('[K-9.16] stays cached while other Objects are created; an append (an update of its row) drops it', async () => {
    const lookups = countOwnerLookups();
    const rt = await open();
    const { pid } = await rt.spawn({ goal: 'g' });
    await rt.activateSkill(pid, SKILL);
    const { oid } = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
    // Checked by the engine alone: Object Memory's own tools hand it the owner of a row they read (K-9.29).
    const decide = () => rt.transaction((scope) => rt.authority.authorize(scope, pid, `object:${oid}`, 'write'));
    await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: 0 }); // an update of its row: not cached now
    expect((await decide()).allowed).toBe(true);
    const warm = lookups.get(oid) ?? 0;
    expect(warm).toBe(1); // the owner was looked up once
    for (let i = 0; i < 5; i++) await ok(rt, pid, 'create_memory_object', { type: 'observation', name: `o${i}`, payload: i });
    expect((await decide()).allowed).toBe(true);
    expect(lookups.get(oid) ?? 0).toBe(warm);
    await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: 1 });
    expect((await decide()).allowed).toBe(true);
    expect(lookups.get(oid) ?? 0).toBeGreaterThan(warm);
  });

  it('[K-9.16] a change of owner in the store is seen by the next check: the old owner is refused, the new allowed', async () => {
    const rt = await open();
    const a = (await rt.spawn({ goal: 'a' })).pid;
    const b = (await rt.spawn({ goal: 'b' })).pid;
    for (const pid of [a, b]) await rt.activateSkill(pid, SKILL);
    const { oid } = await ok(rt, a, 'create_memory_object', { type: 'plan', name: 'p', payload: 1 });
    const decide = (pid: string) => rt.transaction((scope) => rt.authority.authorize(scope, pid, `object:${oid}`, 'read'));
    expect((await decide(a)).allowed).toBe(true);
    expect((await decide(b)).allowed).toBe(false);
    await ok(rt, a, 'create_memory_object', { type: 'plan', name: 'q', payload: 2 }); // an insert: a stays cached
    await rt.transaction((scope) =>
      (scope.store as import('kysely').Kysely<any>) // eslint-disable-line @typescript-eslint/no-explicit-any
        .updateTable('om_objects')
        .set({ owner_id: b })
        .where('oid', '=', oid)
        .execute(),
    );
    expect((await decide(a)).allowed).toBe(false);
    expect((await decide(b)).allowed).toBe(true);
  });
});

describe('an Object owner handed to the memo by the rows Object Memory writes and reads (K-9.29)', () => {
  it("[K-9.29] creating, reading and appending to an Object look up no owner row; the rights are the resolver's", async () => {
    const lookups = countOwnerLookups();
    const rt = await open();
    const a = (await rt.spawn({ goal: 'a' })).pid;
    const b = (await rt.spawn({ goal: 'b' })).pid;
    for (const pid of [a, b]) await rt.activateSkill(pid, SKILL);
    const ledger = await ok(rt, a, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
    const fixed = await ok(rt, a, 'create_memory_object', { type: 'plan', name: 'fixed', payload: 1 });
    await ok(rt, a, 'append_memory_object', { name: 'ledger', entry: 1 });
    await ok(rt, a, 'append_memory_object', { name: 'ledger', entry: 2 }); // the first one's update made it stale
    await ok(rt, a, 'read_memory_object', { name: 'ledger' });
    await ok(rt, a, 'read_memory_object', { name: 'fixed' });
    expect(lookups.get(ledger.oid) ?? 0).toBe(0);
    expect(lookups.get(fixed.oid) ?? 0).toBe(0);
    // What the memo was handed decides as the resolver's own answer: the owner's rights (no write on an immutable
    // Object), nobody else's.
    const decide = (pid: string, oid: string, right: 'read' | 'write') =>
      rt.transaction(async (scope) => (await rt.authority.authorize(scope, pid, `object:${oid}`, right)).allowed);
    await ok(rt, a, 'read_memory_object', { name: 'fixed' });
    expect([await decide(a, fixed.oid, 'read'), await decide(a, fixed.oid, 'write'), await decide(b, fixed.oid, 'read')]).toEqual([
      true,
      false,
      false,
    ]);
    await ok(rt, a, 'read_memory_object', { name: 'ledger' });
    expect(await decide(a, ledger.oid, 'write')).toBe(true);
    expect(lookups.get(fixed.oid) ?? 0).toBe(0);
    expect(lookups.get(ledger.oid) ?? 0).toBe(0);
  });
});
