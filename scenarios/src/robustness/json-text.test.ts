import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nested, ownKeyObject } from './hostile-values.js';
import { jsonText } from './json-text.js';

describe('jsonText: JSON.stringify without recursion', () => {
  it('writes what JSON.stringify writes for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(jsonText(v)).toBe(JSON.stringify(v));
      }),
    );
  });

  it('drops undefined members, writes non-finite numbers as null, keeps an own __proto__ key, escapes lone surrogates', () => {
    const v = { a: undefined, b: [undefined, Number.NaN, Number.POSITIVE_INFINITY, -0], c: ownKeyObject('__proto__', { x: '\ud800' }) };
    expect(jsonText(v)).toBe(JSON.stringify(v));
    expect(jsonText(v)).toBe('{"b":[null,null,null,0],"c":{"__proto__":{"x":"\\ud800"}}}');
  });

  it('writes 10,000 nested levels (past what JSON.stringify takes), and JSON.parse reads the same value back', () => {
    for (const shape of ['array', 'object', 'mixed'] as const) {
      expect(jsonText(nested(1_000, shape))).toBe(JSON.stringify(nested(1_000, shape)));
      const text = jsonText(nested(10_000, shape));
      expect(text.length).toBeGreaterThan(20_000);
      expect(jsonText(JSON.parse(text))).toBe(text);
    }
  });
});
