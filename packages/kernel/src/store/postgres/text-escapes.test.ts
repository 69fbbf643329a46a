import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeJson, decodeText, encodeParam, encodeParams } from './text-escapes.js';

/** Any UTF-16 code unit, lone surrogates and NUL included, and the characters the escapes are made of. */
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('\\', 'u', '0', 'd', '8', 'f', '\uffff', '\ud83d', '\ude00'),
);
const anyText = fc.string({ unit, maxLength: 40 });
/** What PostgreSQL refuses in text (NUL) or changes (an unpaired surrogate). */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** What jsonb refuses: `\u0000` or a surrogate escape after an even run of backslashes. */
const JSONB_REFUSES = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

describe('PostgreSQL text escapes', () => {
  it('[K-15.17] any string round-trips through a text column exactly, and what is sent holds nothing PostgreSQL refuses', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const sent = encodeParam(s);
        expect(decodeText(sent)).toBe(s);
        expect(UNSTORABLE.test(sent)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('[K-15.17] any JSON value round-trips through jsonb (parsed and printed again) exactly, and jsonb gets no bad escape', () => {
    const value = fc.jsonValue().chain((v) => fc.record({ v: fc.constant(v), s: anyText, k: anyText }));
    fc.assert(
      fc.property(value, ({ v, s, k }) => {
        // As JSON holds it (-0 is 0): what a store of JSON text can be asked to give back.
        const doc = JSON.parse(JSON.stringify({ v, s, [k]: [s, k] }));
        const sent = encodeParam(JSON.stringify(doc));
        expect(JSONB_REFUSES.test(sent)).toBe(false);
        // jsonb parses the text and prints it back with its own spacing; the mark and hex digits are plain characters.
        const printed = JSON.stringify(JSON.parse(sent), null, 1);
        expect(JSON.parse(decodeJson(printed))).toEqual(doc);
      }),
      { numRuns: 1000 },
    );
  });

  it('[K-15.17] ordinary text passes unchanged, and parameters are copied only when one changes', () => {
    for (const s of ['', 'plain', 'emoji \u{1F600}', '{"a":"\\n\\u0041"}', 'back\\slash']) expect(encodeParam(s)).toBe(s);
    const params = ['a', 1, null, 'b'];
    expect(encodeParams(params)).toBe(params);
    expect(encodeParams(['a', 'x\u0000'])).toEqual(['a', 'x\uffff0000']);
    expect(encodeParam('{"k":"\\ud800"}')).toBe('{"k":"\uffffud800"}');
  });
});
