import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalize } from './canonical.js';
import { copyJson, type JsonValue } from './json-value.js';
import { readPage, READ_RESULT_BYTE_LIMIT, shapeOf } from './paging.js';
import { codeOf } from './testing/code-of.js';

const envelope = {
  oid: 'obj_0123456789abcdef',
  namespace: 'process:pid_0123456789abcdef',
  name: 'n',
  type: 'plan',
  version: 1,
  json_pointer: '',
};

const read = (value: JsonValue, opts: { maxChars?: number; cursor?: number; expected?: string | null } = {}) =>
  readPage({
    selection: value,
    canonical: canonicalize(value),
    maxChars: opts.maxChars ?? 12_000,
    cursor: opts.cursor ?? 0,
    expectedSha256: opts.expected ?? null,
    envelope,
  });

/** Follows next_cursor under the first page's digest; returns the pages. */
function readAll(value: JsonValue, maxChars: number) {
  const pages = [read(value, { maxChars })];
  while (pages[pages.length - 1]!.next_cursor !== undefined) {
    const last = pages[pages.length - 1]!;
    pages.push(read(value, { maxChars, cursor: last.next_cursor, expected: pages[0]!.sha256 }));
  }
  return pages;
}

describe('paged read', () => {
  test('[OM-37] a small object is a json_value: 29 bytes, one page, no preview or next_cursor', () => {
    const r = read({ z: '雪', a: [true, null, 3] });
    expect(r.representation).toBe('json_value');
    expect(r.payload).toEqual({ z: '雪', a: [true, null, 3] });
    expect(r.serialized_bytes).toBe(29);
    expect(r.page_bytes).toBe(29);
    expect(r.page_offset_bytes).toBe(0);
    expect(r.truncated).toBe(false);
    expect(r.omitted_bytes).toBe(0);
    expect(r).not.toHaveProperty('preview');
    expect(r).not.toHaveProperty('preview_encoding');
    expect(r).not.toHaveProperty('next_cursor');
    expect(r.sha256).toBe(canonicalize({ a: [true, null, 3], z: '雪' }).sha256);
  });

  test('[OM-38] shapes of "雪x", 7 and null, with payload present', () => {
    expect(read('雪x').shape).toEqual({ kind: 'string', character_count: 2, utf8_bytes: 4 });
    expect(read(7).shape).toEqual({ kind: 'number' });
    const n = read(null);
    expect(n.shape).toEqual({ kind: 'null' });
    expect(n).toHaveProperty('payload', null);
    expect(n.payload_type).toBe('null');
    expect(shapeOf({ a: 1, b: 2 })).toEqual({ kind: 'object', field_count: 2 });
    expect(shapeOf([1, 2, 3])).toEqual({ kind: 'array', item_count: 3 });
    expect(shapeOf(true)).toEqual({ kind: 'boolean' });
  });

  test('[OM-39] paged at 7 chars: previews ≤7 chars, contiguous spans 0..N, concatenation is CANON, last page has no next_cursor', () => {
    const value = { items: ['雪'.repeat(9), { answer: 42 }], tail: '终' };
    const c = canonicalize(value);
    const pages = readAll(value, 7);
    expect(pages.length).toBeGreaterThan(1);
    let offset = 0;
    for (const p of pages) {
      expect(p.representation).toBe('canonical_json_page');
      expect(p.payload).toBeNull();
      expect(p.preview_encoding).toBe('canonical_json_utf8');
      expect([...p.preview!].length).toBeLessThanOrEqual(7);
      expect(p.page_offset_bytes).toBe(offset);
      expect(p.page_bytes).toBe(Buffer.byteLength(p.preview!, 'utf8'));
      expect(p.serialized_bytes).toBe(c.bytes.length);
      expect(p.sha256).toBe(c.sha256);
      offset += p.page_bytes;
      expect(p.omitted_bytes).toBe(c.bytes.length - offset);
      expect(p.truncated).toBe(p.omitted_bytes > 0);
    }
    expect(offset).toBe(c.bytes.length);
    expect(pages.map((p) => p.preview).join('')).toBe(c.text);
    expect(pages[pages.length - 1]).not.toHaveProperty('next_cursor');
    expect(JSON.parse(pages.map((p) => p.preview).join(''))).toEqual(value);
  });

  test('[OM-40] a digest of 64 zeros is digest_mismatch', () => {
    expect(codeOf(() => read({ a: 1 }, { expected: '0'.repeat(64) }))).toBe('digest_mismatch');
    expect(codeOf(() => read({ a: 1 }, { expected: canonicalize({ a: 1 }).sha256 }))).toBeUndefined();
  });

  test('[OM-41] "雪x" with its digest: cursor 2 is cursor_not_boundary, cursor 6 is cursor_out_of_range', () => {
    const sha = canonicalize('雪x').sha256;
    expect(codeOf(() => read('雪x', { cursor: 2, expected: sha }))).toBe('cursor_not_boundary');
    expect(codeOf(() => read('雪x', { cursor: 6, expected: sha }))).toBe('cursor_out_of_range');
    const p = read('雪x', { cursor: 1, expected: sha });
    expect(p.representation).toBe('canonical_json_page'); // cursor > 0 always pages
    expect(p.preview).toBe('雪x"');
    expect(p).not.toHaveProperty('next_cursor');
  });

  test('[OM-45] a 200,000-SIZE payload read at 200,000 chars takes ≥2 pages that reconstruct it', () => {
    const value = { blob: 'x'.repeat(199_988) };
    const pages = readAll(value, 200_000);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    for (const p of pages) expect(Buffer.byteLength(JSON.stringify(p), 'utf8')).toBeLessThanOrEqual(READ_RESULT_BYTE_LIMIT - 512);
    expect(JSON.parse(pages.map((p) => p.preview).join(''))).toEqual(value);
  });

  test('pages shrink to the serialized budget when escapes inflate the preview', () => {
    const value = '"'.repeat(150_000); // each quote serializes as \" in the result
    const pages = readAll(value, 200_000);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    for (const p of pages) expect(Buffer.byteLength(JSON.stringify(p), 'utf8')).toBeLessThanOrEqual(READ_RESULT_BYTE_LIMIT - 512);
    expect(pages.map((p) => p.preview).join('')).toBe(canonicalize(value).text);
  });

  test("[OM-46] property: pages under the first digest rebuild the value; another version's cursor fails with digest_mismatch", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 1, max: 64 }), (raw, maxChars) => {
        const copy = copyJson(raw);
        expect(copy.ok).toBe(true);
        const value = (copy as { value: JsonValue }).value;
        const pages = readAll(value, maxChars);
        const text =
          pages.length === 1 && pages[0]!.representation === 'json_value' ? canonicalize(value).text : pages.map((p) => p.preview).join('');
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        const changed: JsonValue = { changed: value };
        if (pages.length > 1) {
          expect(codeOf(() => read(changed, { maxChars, cursor: pages[0]!.next_cursor, expected: pages[0]!.sha256 }))).toBe(
            'digest_mismatch',
          );
        }
      }),
      { numRuns: 300 },
    );
  });
});
