import { describe, expect, test } from 'vitest';
import { codePointLength, copyJson, requireJson } from './json-value.js';

describe('JSON values', () => {
  test('copies finite JSON deeply', () => {
    const src = { a: [1, { b: 'c' }], d: null };
    const r = copyJson(src);
    expect(r).toEqual({ ok: true, value: src });
    expect((r as { value: unknown }).value).not.toBe(src);
  });

  test('NaN, Infinity, undefined, functions, class instances, holes and cycles are not JSON (payload_not_json)', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    // biome-ignore lint/suspicious/noSparseArray: a hole in an array is one of the non-JSON values under test.
    for (const bad of [NaN, Infinity, undefined, () => 1, new Date(), [1, , 2], cyclic, { a: { b: [NaN] } }, 10n]) {
      expect(() => requireJson(bad, 'payload')).toThrow(expect.objectContaining({ code: 'payload_not_json' }));
    }
    expect(copyJson({ a: { b: [NaN] } })).toMatchObject({ ok: false, problem: { pointer: '/a/b/0' } });
  });

  test('shared (non-cyclic) references are fine; nesting is bounded', () => {
    const shared = { x: 1 };
    expect(copyJson({ a: shared, b: shared }).ok).toBe(true);
    let deep: unknown = 0;
    for (let i = 0; i < 1_001; i++) deep = [deep];
    expect(copyJson(deep).ok).toBe(false);
  });

  test('"__proto__" stays an own key', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true}}');
    const r = copyJson(parsed);
    expect(r.ok).toBe(true);
    const v = (r as { value: Record<string, unknown> }).value;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__']);
  });

  test('chars are code points', () => {
    expect(codePointLength('雪x')).toBe(2);
    expect(codePointLength('😀')).toBe(1);
    expect(codePointLength('\ud800a')).toBe(2);
  });
});
