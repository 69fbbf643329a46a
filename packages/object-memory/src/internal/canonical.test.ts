import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalize, canonicalLength, canonicalText, compareCodePoints } from './canonical.js';
import { codePointLength, type JsonValue } from './json-value.js';

describe('CANON', () => {
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

  test('canonicalLength counts the code points of CANON without building it', () => {
    expect(canonicalLength({ z: '雪', a: [true, null, 3] })).toBe(27);
    expect(canonicalLength(['\ud800', '😀', '\u0001\n"\\', -0, 1e21, 1.5e-7, {}, []])).toBe(
      codePointLength(canonicalText(['\ud800', '😀', '\u0001\n"\\', -0, 1e21, 1.5e-7, {}, []])),
    );
    // Any UTF-16 unit, lone surrogates included, in keys and values.
    const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    const text = fc.oneof(fc.string({ unit, maxLength: 8 }), fc.string({ unit: 'grapheme', maxLength: 8 }));
    const json = fc.letrec<{ value: JsonValue }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        text,
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(text, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (v) => canonicalLength(v) === codePointLength(canonicalText(v))),
      { numRuns: 500 },
    );
  });
});
