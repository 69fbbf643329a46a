import { describe, expect, test } from 'vitest';
import { omDb } from '../internal/schema.js';
import { objectMemoryToolTests } from '../internal/testing/tool-test-kit.js';

const kit = objectMemoryToolTests();
const { open, agent, twoWithProj, hostCreate, inspect, roots, list, read, create, append, ledger } = kit;

describe('create_memory_object', () => {
  test('[OM-19] a ledger create returns exactly oid,namespace,name,type with an obj_ id', async () => {
    await open();
    const P = await agent();
    const r = await ledger(P);
    expect(Object.keys(r).sort()).toEqual(['name', 'namespace', 'oid', 'type']);
    expect(r).toMatchObject({ namespace: `process:${P}`, name: 'ledger', type: 'plan' });
    expect(r.oid).toMatch(/^obj_[0-9a-f]{16}$/);
  });

  test("[OM-20] the new ledger lists at version 1 and P's view holds its handle exactly once", async () => {
    await open();
    const P = await agent();
    const r = await ledger(P);
    const entry = (await list(P)).objects.find((o: { oid: string }) => o.oid === r.oid);
    expect(entry).toEqual({ oid: r.oid, namespace: `process:${P}`, name: 'ledger', type: 'plan', version: 1 });
    const mine = (await roots(P)).filter((root) => root.oid === r.oid);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.capabilityId).toMatch(/^cap_/);
  });

  test('[OM-21] an omitted or "" name becomes <type>:<oid>', async () => {
    await open();
    const P = await agent();
    const a = await create(P, { type: 'evidence', payload: 1 });
    const b = await create(P, { type: 'claim', payload: 2, name: '' });
    const c = await create(P, { type: 'claim', payload: 3, name: null });
    expect(a.name).toBe(`evidence:${a.oid}`);
    expect(b.name).toBe(`claim:${b.oid}`);
    expect(c.name).toBe(`claim:${c.oid}`);
  });

  test('[OM-22] "  notes  " is stored as notes', async () => {
    await open();
    const P = await agent();
    expect((await create(P, { type: 'summary', name: '  notes  ', payload: 'n' })).name).toBe('notes');
    expect((await read(P, { name: 'notes' })).payload).toBe('n');
  });

  test('[OM-23] names a/b, a\\b, ., .., "   " are invalid_name', async () => {
    await open();
    const P = await agent();
    for (const name of ['a/b', 'a\\b', '.', '..', '   '])
      expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan', name, payload: 1 })).code, name).toBe('invalid_name');
  });

  test("[OM-24] a second notes in P's scope is object_name_exists; notes in proj and in Q's scope are fine", async () => {
    const { P, Q } = await twoWithProj();
    await create(P, { type: 'summary', name: 'notes', payload: 1 });
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'summary', name: 'notes', payload: 2 })).code).toBe('object_name_exists');
    await create(P, { type: 'summary', name: 'notes', namespace: 'proj', payload: 3 });
    await create(Q, { type: 'summary', name: 'notes', payload: 4 });
    expect((await read(P, { name: 'notes' })).payload).toBe(1);
  });

  test('check order: a taken name fails before parents are checked', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'summary', name: 'notes', payload: 1 });
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'summary', name: 'notes', payload: 2, parent_oids: [''] })).code).toBe(
      'object_name_exists',
    );
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'summary', name: 'other', payload: 2, parent_oids: [''] })).code).toBe(
      'parent_invalid',
    );
  });

  test('[OM-25] type note is invalid_object_type', async () => {
    await open();
    const P = await agent();
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'note', payload: 1 })).code).toBe('invalid_object_type');
  });

  test('[OM-26] payload SIZE exactly 200,000 is accepted; 200,001 is payload_too_large and creates nothing', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'artifact', name: 'max', payload: { blob: 'x'.repeat(199_988) } });
    const before = await list(P);
    const e = await kit.t.fails(P, 'create_memory_object', { type: 'artifact', name: 'over', payload: { blob: 'x'.repeat(199_989) } });
    expect(e.code).toBe('payload_too_large');
    expect(e.message).toContain('200000');
    expect(await list(P)).toEqual(before);
  });

  test('[OM-82] a JSON string of the oversize payload is payload_too_large too', async () => {
    await open();
    const P = await agent();
    const text = JSON.stringify({ blob: 'x'.repeat(199_989) });
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'artifact', payload: text })).code).toBe('payload_too_large');
  });

  test('[OM-27] a string that looks like JSON is stored as a string', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'message', name: 's', payload: '{"a":1}' });
    const r = await read(P, { name: 's' });
    expect(r.payload_type).toBe('string');
    expect(r.payload).toBe('{"a":1}');
  });

  test('[OM-28] trust_level verified, integrity checked or a declassification_authority are label_elevation_denied', async () => {
    await open();
    const P = await agent();
    for (const metadata of [{ trust_level: 'verified' }, { integrity: 'checked' }, { declassification_authority: 'h' }]) {
      expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan', payload: 1, metadata })).code, JSON.stringify(metadata)).toBe(
        'label_elevation_denied',
      );
    }
  });

  test('[OM-29] metadata origin, token_estimate or foo are invalid_metadata', async () => {
    await open();
    const P = await agent();
    for (const key of ['origin', 'token_estimate', 'foo']) {
      expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan', payload: 1, metadata: { [key]: 'x' } })).code, key).toBe(
        'invalid_metadata',
      );
    }
  });

  test('[OM-30] sensitivity top, tags "x", tenant " a" or a 32,001-char title are invalid_metadata', async () => {
    await open();
    const P = await agent();
    for (const metadata of [{ sensitivity: 'top' }, { tags: 'x' }, { tenant: ' a' }, { title: 't'.repeat(32_001) }]) {
      const e = await kit.t.fails(P, 'create_memory_object', { type: 'plan', payload: 1, metadata });
      expect(e.code, JSON.stringify(metadata).slice(0, 40)).toBe('invalid_metadata');
      expect(e.message).toMatch(/^metadata/);
    }
  });

  test('[OM-31] stored origin is llm and the token estimate is derived from the payload', async () => {
    await open();
    const P = await agent();
    const r = await create(P, { type: 'plan', payload: { text: 'x'.repeat(400) }, metadata: { title: 'T', tags: ['a'] } });
    const o = await inspect(r.oid);
    expect(o.labels).toMatchObject({ origin: 'llm', sensitivity: 'normal', trust_level: 'unknown', integrity: 'unknown' });
    expect(o.metadata).toEqual({
      title: 'T',
      summary: null,
      tags: ['a'],
      mime_type: null,
      retention_policy: 'default',
      token_estimate: 102,
    }); // ⌊(11 + 400) chars / 4⌋
  });

  test("[OM-32] after reading a secret object, P's create declared public is stored secret", async () => {
    await open();
    const P = await agent();
    const R = await agent();
    await hostCreate(P, { type: 'evidence', name: 'secret', payload: 's', labels: { sensitivity: 'secret' } });
    const early = await create(P, { type: 'summary', payload: 0, metadata: { sensitivity: 'confidential' } });
    expect((await inspect(early.oid)).labels.sensitivity).toBe('confidential');
    await read(P, { name: 'secret' });
    const a = await create(P, { type: 'summary', payload: 1, metadata: { sensitivity: 'public' } });
    expect((await inspect(a.oid)).labels.sensitivity).toBe('secret');
    // A process that read nothing secret keeps its floor: a fresh flow is normal, so public is raised to normal.
    const b = await create(R, { type: 'summary', payload: 1, metadata: { sensitivity: 'public' } });
    expect((await inspect(b.oid)).labels.sensitivity).toBe('normal');
  });

  test('[OM-33] parent tenant a with declared tenant b is stored mixed', async () => {
    await open();
    const P = await agent();
    const parent = await hostCreate(P, { type: 'evidence', payload: 1, labels: { tenant: 'a' } });
    const without = await create(P, { type: 'claim', payload: 1, metadata: { tenant: 'b' } });
    expect((await inspect(without.oid)).labels.tenant).toBe('b');
    const withParent = await create(P, { type: 'claim', payload: 1, metadata: { tenant: 'b' }, parent_oids: [parent.oid] });
    expect((await inspect(withParent.oid)).labels.tenant).toBe('mixed');
  });

  test('[OM-34] parent trust untrusted with declared unknown is stored untrusted', async () => {
    await open();
    const P = await agent();
    const parent = await hostCreate(P, { type: 'observation', payload: 1, labels: { trust_level: 'untrusted' } });
    const o = await create(P, { type: 'claim', payload: 1, metadata: { trust_level: 'unknown' }, parent_oids: [parent.oid] });
    expect((await inspect(o.oid)).labels.trust_level).toBe('untrusted');
  });

  test(`[OM-35] an unreadable parent is parent_unavailable; with object:* read a missing one is parent_not_found; "" is \
parent_invalid`, async () => {
    await open();
    const P = await agent();
    const Q = await agent();
    const theirs = await create(Q, { type: 'plan', payload: 1 });
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan', payload: 1, parent_oids: [theirs.oid] })).code).toBe(
      'parent_unavailable',
    );
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan', payload: 1, parent_oids: ['obj_0000000000000000'] })).code).toBe(
      'parent_unavailable',
    );
    await kit.t.grant(P, 'object:*', ['read']);
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan', payload: 1, parent_oids: ['obj_0000000000000000'] })).code).toBe(
      'parent_not_found',
    );
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan', payload: 1, parent_oids: [''] })).code).toBe('parent_invalid');
    await create(P, { type: 'plan', payload: 1, parent_oids: [theirs.oid] });
  });

  test('[OM-36] a one-use namespace write survives an object_name_exists failure, is spent by the next create, then denied', async () => {
    const { P, Q } = await twoWithProj();
    await create(P, { type: 'plan', name: 'taken', namespace: 'proj', payload: 1 });
    const cap = await kit.t.grant(Q, 'object_namespace:proj', ['write'], { uses: 1 });
    expect((await kit.t.fails(Q, 'create_memory_object', { type: 'plan', name: 'taken', namespace: 'proj', payload: 2 })).code).toBe(
      'object_name_exists',
    );
    expect((await kit.t.runtime.capabilities(Q)).find((c) => c.id === cap.id)?.usesRemaining).toBe(1);
    await create(Q, { type: 'plan', name: 'fresh', namespace: 'proj', payload: 2 });
    expect((await kit.t.fails(Q, 'create_memory_object', { type: 'plan', name: 'third', namespace: 'proj', payload: 3 })).code).toBe(
      'namespace_denied',
    );
  });

  test(`[OM-74] missing type or payload is invalid_arguments and creates nothing; payload null is fine; defaults are process scope and \
immutable`, async () => {
    await open();
    const P = await agent();
    const before = await list(P);
    expect((await kit.t.fails(P, 'create_memory_object', { payload: 1 })).code).toBe('invalid_arguments');
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'plan' })).code).toBe('invalid_arguments');
    expect(await list(P)).toEqual(before);
    const r = await create(P, { type: 'plan', name: 'nil', payload: null });
    expect(r.namespace).toBe(`process:${P}`);
    expect((await read(P, { name: 'nil' })).payload).toBeNull();
    await create(P, { type: 'plan', name: 'fixed', payload: { entries: [] } });
    expect((await kit.t.fails(P, 'append_memory_object', { name: 'fixed', entry: 1 })).code).toBe('object_denied');
  });

  test('[OM-75] parents is an alias of parent_oids; both are unioned', async () => {
    await open();
    const P = await agent();
    const o3 = await create(P, { type: 'evidence', payload: 3 });
    const o5 = await create(P, { type: 'evidence', payload: 5 });
    const a = await create(P, { type: 'claim', payload: 1, parents: [o3.oid] });
    const b = await create(P, { type: 'claim', payload: 1, parent_oids: [o3.oid] });
    const c = await create(P, { type: 'claim', payload: 1, parent_oids: [o3.oid], parents: [o5.oid] });
    expect((await inspect(a.oid)).provenance.parent_oids).toContain(o3.oid);
    expect((await inspect(b.oid)).provenance.parent_oids).toContain(o3.oid);
    expect((await inspect(c.oid)).provenance.parent_oids).toEqual(expect.arrayContaining([o3.oid, o5.oid]));
    expect((await kit.t.fails(P, 'create_memory_object', { type: 'claim', payload: 1, parents: [''] })).code).toBe('parent_invalid');
  });

  test('[OM-76] each of the 24 types creates; the type imposes no payload schema', async () => {
    await open();
    const P = await agent();
    const types = [
      'task',
      'goal',
      'plan',
      'step',
      'constraint',
      'message',
      'human_decision',
      'human_request',
      'tool_result',
      'observation',
      'error_trace',
      'code_patch',
      'test_result',
      'evidence',
      'claim',
      'summary',
      'skill',
      'tool_spec',
      'tool_candidate',
      'tool_artifact',
      'checkpoint',
      'process_state',
      'external_ref',
      'artifact',
    ];
    for (const type of types) expect((await create(P, { type, payload: { t: type } })).type).toBe(type);
    await create(P, { type: 'goal', name: 'g7', payload: 7 });
    await create(P, { type: 'plan', name: 'ptext', payload: 'text' });
    expect((await read(P, { name: 'g7' })).payload).toBe(7);
  });

  test(`[OM-77] provenance parents include observed sources: P read o1, so o2 has {o1,o3}; an append adds o4 but never the ledger \
itself`, async () => {
    await open();
    const P = await agent();
    const Q = await agent();
    const o1 = await create(Q, { type: 'evidence', name: 'o1', payload: 1 });
    const o3 = await create(Q, { type: 'evidence', name: 'o3', payload: 3 });
    const o4 = await create(Q, { type: 'evidence', name: 'o4', payload: 4 });
    for (const o of [o1, o3, o4]) await kit.t.grant(P, `object:${o.oid}`, ['read']);
    await kit.t.grant(P, `object_namespace:process:${Q}`, ['read']);
    const L = await ledger(P);
    await read(P, { name: 'o1', namespace: `process:${Q}` });
    const o2 = await create(P, { type: 'claim', payload: 2, parent_oids: [o3.oid] });
    const o2b = await create(P, { type: 'claim', payload: 2 });
    expect((await inspect(o2.oid)).provenance.parent_oids).toEqual(expect.arrayContaining([o1.oid, o3.oid]));
    expect((await inspect(o2b.oid)).provenance.parent_oids).toContain(o1.oid);
    await read(P, { name: 'ledger' });
    await read(P, { name: 'o4', namespace: `process:${Q}` });
    await append(P, { name: 'ledger', entry: 'e' });
    const parents = (await inspect(L.oid)).provenance.parent_oids;
    expect(parents).toContain(o4.oid);
    expect(parents).not.toContain(L.oid);
  });

  test('[OM-77.3] a model create (and an append) lists Objects only, no message ids, and chains to the last create', async () => {
    await open();
    const P = await agent();
    const Q = await agent();
    const o1 = await create(Q, { type: 'evidence', name: 'o1', payload: 1 });
    const o2 = await create(Q, { type: 'evidence', name: 'o2', payload: 2 });
    for (const o of [o1, o2]) await kit.t.grant(P, `object:${o.oid}`, ['read']);
    await kit.t.grant(P, `object_namespace:process:${Q}`, ['read']);
    await read(P, { name: 'o1', namespace: `process:${Q}` });
    await kit.t.runtime.transaction((scope) => kit.t.runtime.authority.flow(scope, P).taint({}, ['msg_00000000000000aa']));
    const c1 = await create(P, { type: 'claim', payload: 1 });
    await read(P, { name: 'o2', namespace: `process:${Q}` });
    const c2 = await create(P, { type: 'claim', payload: 2 });
    const stored = async (oid: string) =>
      kit.t.runtime.transaction(async (scope) => {
        const row = await omDb(scope.store).selectFrom('om_objects').select('provenance').where('oid', '=', oid).executeTakeFirstOrThrow();
        return JSON.parse(row.provenance);
      });
    expect(await stored(c1.oid)).toMatchObject({ parent_oids: [o1.oid] });
    expect(await stored(c2.oid)).toMatchObject({ parent_oids: [o2.oid], parents_from: c1.oid });
    expect((await inspect(c2.oid)).provenance.parent_oids).toEqual([o2.oid, o1.oid]);
    // An append lists Objects only too.
    const L = await ledger(P);
    await append(P, { name: 'ledger', entry: 'e' });
    expect((await inspect(L.oid)).provenance.parent_oids).not.toContain('msg_00000000000000aa');
  });
});
