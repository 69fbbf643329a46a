import { definePlugin } from '@libos/sdk';
import type { Kysely } from 'kysely';
import { describe, expect, test } from 'vitest';
import { objectMemoryToolTests } from '../internal/testing/tool-test-kit.js';

const kit = objectMemoryToolTests();
const { open, agent, twoWithProj, objects, hostCreate, inspect, read, create, append, ledger } = kit;

describe('append_memory_object', () => {
  test('[OM-49] appending {"x":1} to a ledger gives version 2, entries, length 1, and the read shows it', async () => {
    await open();
    const P = await agent();
    const L = await ledger(P);
    const r = await append(P, { name: 'ledger', entry: { x: 1 } });
    expect(r).toEqual({
      oid: L.oid,
      namespace: `process:${P}`,
      name: 'ledger',
      version: 2,
      appended: true,
      list_field: 'entries',
      length: 1,
    });
    expect((await read(P, { name: 'ledger' })).payload).toEqual({ entries: [{ x: 1 }] });
  });

  test('[OM-50] list_field notes on {"entries":[]} creates notes:[entry]', async () => {
    await open();
    const P = await agent();
    await ledger(P);
    expect(await append(P, { name: 'ledger', entry: 'n', list_field: 'notes' })).toMatchObject({ list_field: 'notes', length: 1 });
    expect((await read(P, { name: 'ledger' })).payload).toEqual({ entries: [], notes: ['n'] });
  });

  test('[OM-51] {"entries":5} is append_field_not_list; payload and version unchanged', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'plan', name: 'bad', payload: { entries: 5 }, immutable: false });
    const before = await read(P, { name: 'bad' });
    expect((await kit.t.fails(P, 'append_memory_object', { name: 'bad', entry: 1 })).code).toBe('append_field_not_list');
    const after = await read(P, { name: 'bad' });
    expect(after).toMatchObject({ version: before.version, sha256: before.sha256, payload: { entries: 5 } });
  });

  test('[OM-52] a root list ignores list_field and returns null', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'plan', name: 'arr', payload: [1], immutable: false });
    expect(await append(P, { name: 'arr', entry: 2, list_field: 'x' })).toMatchObject({ list_field: null, length: 2, version: 2 });
    expect((await read(P, { name: 'arr' })).payload).toEqual([1, 2]);
  });

  test('[OM-53] "s", 3 and null payloads are append_target_not_container', async () => {
    await open();
    const P = await agent();
    for (const [i, payload] of ['s', 3, null].entries()) {
      await create(P, { type: 'plan', name: `t${i}`, payload, immutable: false });
      expect((await kit.t.fails(P, 'append_memory_object', { name: `t${i}`, entry: 1 })).code).toBe('append_target_not_container');
    }
  });

  test('[OM-54] the creator of an immutable object gets object_denied; with an explicit write grant, object_immutable', async () => {
    await open();
    const P = await agent();
    const o = await create(P, { type: 'plan', name: 'frozen', payload: { entries: [] } });
    expect((await kit.t.fails(P, 'append_memory_object', { name: 'frozen', entry: 1 })).code).toBe('object_denied');
    await kit.t.grant(P, `object:${o.oid}`, ['write']);
    expect((await kit.t.fails(P, 'append_memory_object', { name: 'frozen', entry: 1 })).code).toBe('object_immutable');
  });

  test('[OM-55] an entry of SIZE 32,769 is entry_too_large; 32,768 is appended', async () => {
    await open();
    const P = await agent();
    await ledger(P);
    const e = await kit.t.fails(P, 'append_memory_object', { name: 'ledger', entry: { blob: 'x'.repeat(32_757) } });
    expect(e.code).toBe('entry_too_large');
    expect(e.message).toContain('32768');
    expect(await append(P, { name: 'ledger', entry: { blob: 'x'.repeat(32_756) } })).toMatchObject({ length: 1 });
  });

  test('[OM-82] entry "x"*32767 is entry_too_large and "x"*32766 is fine', async () => {
    await open();
    const P = await agent();
    await ledger(P);
    expect((await kit.t.fails(P, 'append_memory_object', { name: 'ledger', entry: 'x'.repeat(32_767) })).code).toBe('entry_too_large');
    expect(await append(P, { name: 'ledger', entry: 'x'.repeat(32_766) })).toMatchObject({ length: 1 });
  });

  test('[OM-56] an append that would grow the payload past 200,000 is payload_too_large and changes nothing', async () => {
    await open();
    const P = await agent();
    // SIZE({"entries": [], "pad": "x"*N}) = N + 26
    await create(P, { type: 'plan', name: 'full', payload: { entries: [], pad: 'x'.repeat(199_970) }, immutable: false });
    const before = await read(P, { name: 'full', json_pointer: '/entries' });
    const e = await kit.t.fails(P, 'append_memory_object', { name: 'full', entry: 'abcdefgh' });
    expect(e.code).toBe('payload_too_large');
    expect(await read(P, { name: 'full', json_pointer: '/entries' })).toEqual(before);
    expect(await append(P, { name: 'full', entry: 'a' })).toMatchObject({ version: 2 }); // SIZE 199,999 fits
  });

  test('[OM-57] Q with read but not write gets object_denied', async () => {
    const { P, Q } = await twoWithProj();
    const L = await ledger(P, { namespace: 'proj' });
    await kit.t.grant(Q, 'object_namespace:proj', ['read']);
    await kit.t.grant(Q, `object:${L.oid}`, ['read']);
    expect((await kit.t.fails(Q, 'append_memory_object', { name: 'ledger', namespace: 'proj', entry: 1 })).code).toBe('object_denied');
  });

  test('[OM-58] a one-use read+write grant allows exactly one append', async () => {
    const { P, Q } = await twoWithProj();
    const L = await ledger(P, { namespace: 'proj' });
    await kit.t.grant(Q, 'object_namespace:proj', ['read']);
    await kit.t.grant(Q, `object:${L.oid}`, ['read', 'write'], { uses: 1 });
    expect(await append(Q, { name: 'ledger', namespace: 'proj', entry: 'q' })).toMatchObject({ version: 2, length: 1 });
    expect((await kit.t.fails(Q, 'append_memory_object', { name: 'ledger', namespace: 'proj', entry: 'q' })).code).toBe('object_not_found');
    expect((await read(P, { name: 'ledger', namespace: 'proj' })).payload).toEqual({ entries: ['q'] });
  });

  test.each([10, 25])('[OM-59] %i concurrent appends to one ledger all land exactly once', async (n) => {
    await open();
    const P = await agent();
    await ledger(P);
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => kit.t.call(P, 'append_memory_object', { name: 'ledger', entry: { i } })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    const r = await read(P, { name: 'ledger' });
    expect(r.version).toBe(1 + n);
    const entries = r.payload.entries as { i: number }[];
    expect(entries).toHaveLength(n);
    expect(new Set(entries.map((e) => e.i)).size).toBe(n);
    expect(results.map((x) => (x as { payload: { length: number } }).payload.length).sort((a, b) => a - b)).toEqual(
      Array.from({ length: n }, (_, i) => i + 1),
    );
  });

  test('[OM-60] after reading a secret object, appending to a normal ledger makes it secret', async () => {
    await open();
    const P = await agent();
    const L = await ledger(P);
    expect((await inspect(L.oid)).labels.sensitivity).toBe('normal');
    await hostCreate(P, { type: 'evidence', name: 'secret', payload: 's', labels: { sensitivity: 'secret' } });
    await read(P, { name: 'secret' });
    await append(P, { name: 'ledger', entry: 'derived' });
    expect((await inspect(L.oid)).labels.sensitivity).toBe('secret');
  });

  test(`[OM-80] object read+write without namespace read is namespace_denied; namespace read + write without object read is \
object_not_found; L unchanged`, async () => {
    const { P, Q } = await twoWithProj();
    const L = await ledger(P, { namespace: 'proj' });
    const before = await read(P, { name: 'ledger', namespace: 'proj' });
    await kit.t.grant(Q, `object:${L.oid}`, ['read', 'write']);
    expect((await kit.t.fails(Q, 'append_memory_object', { name: 'ledger', namespace: 'proj', entry: 1 })).code).toBe('namespace_denied');
    const R = await agent();
    await kit.t.grant(R, 'object_namespace:proj', ['read']);
    await kit.t.grant(R, `object:${L.oid}`, ['write']);
    expect((await kit.t.fails(R, 'append_memory_object', { name: 'ledger', namespace: 'proj', entry: 1 })).code).toBe('object_not_found');
    expect(await read(P, { name: 'ledger', namespace: 'proj' })).toEqual(before);
  });

  test('[OM-81] a version bump between load and conditional write is version_conflict; nothing changes; the retry lands once', async () => {
    // The fault comes from outside the tool: P appends under a one-use grant, whose spend (between the tool's load of
    // the record and its conditional write) exhausts the grant; a plugin hook on that event, run in the call's
    // transaction, bumps the Object's version through the store as a concurrent writer would.
    let target: string | null = null;
    let bumps = 0;
    const concurrentWriter = definePlugin({
      name: 'test-concurrent-writer',
      version: '0.0.0',
      skills: [],
      tools: [],
      hooks: {
        events: {
          'capability.revoked': async (scope, event) => {
            if (target === null || event.data.cause !== 'exhausted' || bumps > 0) return;
            bumps++;
            const db = scope.store as Kysely<{ om_objects: { oid: string; version: number } }>;
            await db
              .updateTable('om_objects')
              .set((eb) => ({ version: eb('version', '+', 1) }))
              .where('oid', '=', target)
              .execute();
          },
        },
      },
    });
    await open({ plugins: [concurrentWriter] });
    const P = await agent();
    const L = await ledger(P);
    const source = await hostCreate(P, { type: 'evidence', name: 'conf', payload: 1, labels: { sensitivity: 'confidential' } });
    await read(P, { name: 'conf' });
    const cap = await kit.t.grant(P, `object:${L.oid}`, ['read', 'write'], { uses: 1 });
    const before = await inspect(L.oid);
    target = L.oid;
    const e = await kit.t.fails(P, 'append_memory_object', { name: 'ledger', entry: { x: 1 } });
    expect(bumps).toBe(1);
    expect(e.code).toBe('version_conflict');
    const after = await inspect(L.oid);
    expect(after.version).toBe(before.version);
    expect(after.labels).toEqual(before.labels);
    expect(after.provenance).toEqual(before.provenance);
    expect((await kit.t.runtime.capabilities(P)).find((c) => c.id === cap.id)?.usesRemaining).toBe(1);
    expect(await objects((s) => s.readPayload(L.oid))).toEqual({ entries: [] });
    expect(await append(P, { name: 'ledger', entry: { x: 1 } })).toMatchObject({ version: 2, length: 1 });
    expect((await read(P, { name: 'ledger' })).payload).toEqual({ entries: [{ x: 1 }] });
    expect((await inspect(L.oid)).provenance.parent_oids).toContain(source.oid);
  });

  test('a failure after the payload write restores the runtime-local payload and the row together (rollback undo)', async () => {
    // A plugin hook on `object_appended` runs in the call's transaction after the row and the payload are written;
    // its throw fails the call, which must take both back.
    let failNext = true;
    const failingHook = definePlugin({
      name: 'test-failing-hook',
      version: '0.0.0',
      skills: [],
      tools: [],
      hooks: {
        events: {
          object_appended: async () => {
            if (!failNext) return;
            failNext = false;
            throw new Error('injected failure after the payload write');
          },
        },
      },
    });
    await open({ plugins: [failingHook] });
    const P = await agent();
    await ledger(P);
    const e = await kit.t.fails(P, 'append_memory_object', { name: 'ledger', entry: 'lost' });
    expect(failNext).toBe(false);
    expect(e.code).toBe('internal_error');
    expect(await read(P, { name: 'ledger' })).toMatchObject({ version: 1, payload: { entries: [] } });
    expect(await append(P, { name: 'ledger', entry: 'kept' })).toMatchObject({ version: 2, length: 1 });
    expect((await read(P, { name: 'ledger' })).payload).toEqual({ entries: ['kept'] });
  });

  test('[OM-83] the same entry appended twice is kept twice (no dedupe)', async () => {
    await open();
    const P = await agent();
    await ledger(P);
    await append(P, { name: 'ledger', entry: { x: 1 } });
    expect(await append(P, { name: 'ledger', entry: { x: 1 } })).toMatchObject({ length: 2, version: 3 });
    expect((await read(P, { name: 'ledger' })).payload).toEqual({ entries: [{ x: 1 }, { x: 1 }] });
  });

  test('[OM-72] append output keys are exactly oid,namespace,name,version,appended,list_field,length', async () => {
    await open();
    const P = await agent();
    await ledger(P);
    expect(Object.keys(await append(P, { name: 'ledger', entry: 'e' })).sort()).toEqual([
      'appended',
      'length',
      'list_field',
      'name',
      'namespace',
      'oid',
      'version',
    ]);
  });
});
