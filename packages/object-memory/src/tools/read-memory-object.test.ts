// The read_memory_object tool through the real kernel (ToolBroker, one transaction per call, the authority engine),
// with the plugin test kit: each test opens its own in-memory runtime with Object Memory, a fake clock and
// sequential ids.
import { canonicalSha256 } from '@libos/sdk';
import { describe, expect, test } from 'vitest';
import { objectMemoryToolTests } from '../internal/testing/tool-test-kit.js';

const kit = objectMemoryToolTests();
const { open, agent, twoWithProj, read, create, append, ledger } = kit;

describe('read_memory_object', () => {
  test('[OM-37] {"z":"雪","a":[true,null,3]} reads as a json_value of 29 bytes with the canonical digest', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'observation', name: 'v', payload: { z: '雪', a: [true, null, 3] } });
    const r = await read(P, { name: 'v' });
    expect(r).toMatchObject({
      representation: 'json_value',
      serialized_bytes: 29,
      page_bytes: 29,
      truncated: false,
      omitted_bytes: 0,
      payload: { z: '雪', a: [true, null, 3] },
    });
    expect(r.sha256).toBe(canonicalSha256({ a: [true, null, 3], z: '雪' }));
    expect(r).not.toHaveProperty('preview');
    expect(r).not.toHaveProperty('next_cursor');
  });

  test('[OM-38] shapes of "雪x", 7 and null, with payload null present', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'observation', name: 's', payload: '雪x' });
    await create(P, { type: 'observation', name: 'n', payload: 7 });
    await create(P, { type: 'observation', name: 'z', payload: null });
    expect((await read(P, { name: 's' })).shape).toEqual({ kind: 'string', character_count: 2, utf8_bytes: 4 });
    expect((await read(P, { name: 'n' })).shape).toEqual({ kind: 'number' });
    const z = await read(P, { name: 'z' });
    expect(z.shape).toEqual({ kind: 'null' });
    expect(z).toHaveProperty('payload', null);
  });

  test('[OM-39] paged at 7 chars: previews ≤7 chars, contiguous spans, concatenation is the canonical text', async () => {
    await open();
    const P = await agent();
    const value = { items: ['雪'.repeat(9), { answer: 42 }], tail: '终' };
    await create(P, { type: 'observation', name: 'v', payload: value });
    const pages = [await read(P, { name: 'v', max_payload_chars: 7 })];
    while (pages.at(-1)!.next_cursor !== undefined) {
      pages.push(await read(P, { name: 'v', max_payload_chars: 7, cursor: pages.at(-1)!.next_cursor, expected_sha256: pages[0]!.sha256 }));
    }
    let offset = 0;
    for (const p of pages) {
      expect(p.representation).toBe('canonical_json_page');
      expect(p.payload).toBeNull();
      expect([...p.preview].length).toBeLessThanOrEqual(7);
      expect(p.page_offset_bytes).toBe(offset);
      offset += p.page_bytes;
    }
    expect(offset).toBe(pages[0]!.serialized_bytes);
    expect(pages.map((p) => p.preview).join('')).toBe('{"items":["雪雪雪雪雪雪雪雪雪",{"answer":42}],"tail":"终"}');
    expect(pages.at(-1)).not.toHaveProperty('next_cursor');
  });

  test(`[OM-40] cursor 1 without digest is invalid_arguments; 64 zeros is digest_mismatch; uppercase or 63-char digests are \
invalid_arguments`, async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'observation', name: 'v', payload: 'abcdef' });
    expect((await kit.t.fails(P, 'read_memory_object', { name: 'v', cursor: 1 })).code).toBe('invalid_arguments');
    expect((await kit.t.fails(P, 'read_memory_object', { name: 'v', expected_sha256: '0'.repeat(64) })).code).toBe('digest_mismatch');
    expect((await kit.t.fails(P, 'read_memory_object', { name: 'v', expected_sha256: 'A'.repeat(64) })).code).toBe('invalid_arguments');
    expect((await kit.t.fails(P, 'read_memory_object', { name: 'v', expected_sha256: 'a'.repeat(63) })).code).toBe('invalid_arguments');
  });

  test('[OM-41] "雪x" with its digest: cursor 2 is cursor_not_boundary, cursor 6 is cursor_out_of_range', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'observation', name: 's', payload: '雪x' });
    const sha = (await read(P, { name: 's' })).sha256;
    expect((await kit.t.fails(P, 'read_memory_object', { name: 's', cursor: 2, expected_sha256: sha })).code).toBe('cursor_not_boundary');
    expect((await kit.t.fails(P, 'read_memory_object', { name: 's', cursor: 6, expected_sha256: sha })).code).toBe('cursor_out_of_range');
  });

  test('[OM-42] max_payload_chars 0 or 200,001 is invalid_arguments', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'observation', name: 'v', payload: 1 });
    for (const m of [0, 200_001])
      expect((await kit.t.fails(P, 'read_memory_object', { name: 'v', max_payload_chars: m })).code).toBe('invalid_arguments');
  });

  test('[OM-43] pointer /nested/a~1b/~0key/1 selects {"name":"雪"} with that subtree\'s digest', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'observation', name: 'v', payload: { nested: { 'a/b': { '~key': [0, { name: '雪' }] } } } });
    const r = await read(P, { name: 'v', json_pointer: '/nested/a~1b/~0key/1' });
    expect(r).toMatchObject({ payload: { name: '雪' }, json_pointer: '/nested/a~1b/~0key/1', sha256: canonicalSha256({ name: '雪' }) });
  });

  test('[OM-44] pointer syntax and resolution errors; "/" selects key ""', async () => {
    await open();
    const P = await agent();
    await create(P, { type: 'observation', name: 'v', payload: { l: [1, 2], scalar: 5, '': 1 } });
    for (const p of ['nested', '/a~2'])
      expect((await kit.t.fails(P, 'read_memory_object', { name: 'v', json_pointer: p })).code, p).toBe('pointer_syntax');
    for (const p of ['/missing', '/l/01', '/l/-', '/l/9', '/scalar/x'])
      expect((await kit.t.fails(P, 'read_memory_object', { name: 'v', json_pointer: p })).code, p).toBe('pointer_unresolved');
    expect((await read(P, { name: 'v', json_pointer: '/' })).payload).toBe(1);
  });

  test('[OM-45] a 200,000-SIZE payload read at 200,000 chars takes ≥2 pages that reconstruct it', async () => {
    await open();
    const P = await agent();
    const value = { blob: 'x'.repeat(199_988) };
    await create(P, { type: 'artifact', name: 'big', payload: value });
    const pages = [await read(P, { name: 'big', max_payload_chars: 200_000 })];
    while (pages.at(-1)!.next_cursor !== undefined) {
      pages.push(
        await read(P, {
          name: 'big',
          max_payload_chars: 200_000,
          cursor: pages.at(-1)!.next_cursor,
          expected_sha256: pages[0]!.sha256,
        }),
      );
    }
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(pages.map((p) => p.preview).join(''))).toEqual(value);
  });

  test('[OM-46] after page 1, an append makes page 2 with the old digest digest_mismatch', async () => {
    await open();
    const P = await agent();
    await ledger(P);
    await append(P, { name: 'ledger', entry: 'x'.repeat(100) });
    const p1 = await read(P, { name: 'ledger', max_payload_chars: 20 });
    expect(p1.next_cursor).toBeDefined();
    await append(P, { name: 'ledger', entry: 'y' });
    const e = await kit.t.fails(P, 'read_memory_object', {
      name: 'ledger',
      max_payload_chars: 20,
      cursor: p1.next_cursor,
      expected_sha256: p1.sha256,
    });
    expect(e.code).toBe('digest_mismatch');
    expect(e.message).toContain('restart at cursor 0');
  });

  test('[OM-47] Q with namespace read but no object read gets object_not_found, exactly as for a missing name', async () => {
    const { P, Q } = await twoWithProj();
    await create(P, { type: 'plan', name: 'private', namespace: 'proj', payload: 1 });
    await kit.t.grant(Q, 'object_namespace:proj', ['read']);
    const hidden = await kit.t.fails(Q, 'read_memory_object', { name: 'private', namespace: 'proj' });
    expect(hidden.code).toBe('object_not_found');
    const missing = await kit.t.fails(Q, 'read_memory_object', { name: 'nothing', namespace: 'proj' });
    expect(hidden.message).toBe(missing.message.replace('"nothing"', '"private"'));
  });

  test('[OM-48] Q without namespace read reading a missing name gets namespace_denied', async () => {
    const { Q } = await twoWithProj();
    expect((await kit.t.fails(Q, 'read_memory_object', { name: 'nothing', namespace: 'proj' })).code).toBe('namespace_denied');
  });

  test('[OM-78] names match exactly: plan, Ledger or the OID are object_not_found; " ledger " is found', async () => {
    await open();
    const P = await agent();
    const L = await ledger(P);
    for (const name of ['plan', 'Ledger', L.oid])
      expect((await kit.t.fails(P, 'read_memory_object', { name })).code, name).toBe('object_not_found');
    expect((await read(P, { name: ' ledger ' })).oid).toBe(L.oid);
  });

  test('[OM-79] a read echoes identity, version and pointer; after an append the version is 2 with a new digest', async () => {
    await open();
    const P = await agent();
    const L = await ledger(P);
    const r1 = await read(P, { name: 'ledger', json_pointer: '' });
    expect(r1).toMatchObject({ oid: L.oid, namespace: `process:${P}`, name: 'ledger', type: 'plan', version: 1, json_pointer: '' });
    await append(P, { name: 'ledger', entry: 1 });
    const r2 = await read(P, { name: 'ledger' });
    expect(r2.version).toBe(2);
    expect(r2.sha256).not.toBe(r1.sha256);
  });

  test('a one-use object read is spent by a read and restored when the read fails later (pointer)', async () => {
    const { P, Q } = await twoWithProj();
    const o = await create(P, { type: 'plan', name: 'once', namespace: 'proj', payload: { a: 1 } });
    await kit.t.grant(Q, 'object_namespace:proj', ['read']);
    await kit.t.grant(Q, `object:${o.oid}`, ['read'], { uses: 1 });
    expect((await kit.t.fails(Q, 'read_memory_object', { name: 'once', namespace: 'proj', json_pointer: '/b' })).code).toBe(
      'pointer_unresolved',
    );
    expect((await read(Q, { name: 'once', namespace: 'proj' })).payload).toEqual({ a: 1 });
    expect((await kit.t.fails(Q, 'read_memory_object', { name: 'once', namespace: 'proj' })).code).toBe('object_not_found');
  });
});
