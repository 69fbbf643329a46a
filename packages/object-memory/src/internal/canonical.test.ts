import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { canonicalize, canonicalText, compareCodePoints } from './canonical.js';

describe('CANON (spec §0)', () => {
  test('[OM-37] {"z":"雪","a":[true,null,3]} canonicalizes to 29 UTF-8 bytes with sorted keys', () => {
    const c = canonicalize({ z: '雪', a: [true, null, 3] });
    expect(c.text).toBe('{"a":[true,null,3],"z":"雪"}');
    expect(c.bytes.length).toBe(29);
    expect(c.sha256).toBe(createHash('sha256').update('{"a":[true,null,3],"z":"雪"}', 'utf8').digest('hex'));
  });

  test('keys sort by code point at every level (astral after U+FFFF-range BMP keys)', () => {
    expect(compareCodePoints('\uffff', '😀')).toBeLessThan(0);
    expect(['😀', '\uffff', 'b', 'a'].sort(compareCodePoints)).toEqual(['a', 'b', '\uffff', '😀']);
    expect(canonicalText({ b: { d: 1, c: 2 }, a: [{ y: 1, x: 2 }] })).toBe('{"a":[{"x":2,"y":1}],"b":{"c":2,"d":1}}');
  });

  test('raw non-ASCII, lone surrogates escaped, no whitespace', () => {
    expect(canonicalText(['雪', '\ud800', 'a b'])).toBe('["雪","\\ud800","a b"]');
    expect(canonicalize('\ud800').bytes.toString('utf8')).toBe('"\\ud800"');
  });
});
