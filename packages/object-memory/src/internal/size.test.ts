import { describe, expect, test } from 'vitest';
import { jsonSize, numberSize, stringSize } from './size.js';

describe('SIZE', () => {
  test('[OM-26] SIZE({"blob":"x"*N}) = N+12, so 199,988 x fills exactly 200,000', () => {
    for (const n of [0, 1, 7, 199_988, 199_989]) expect(jsonSize({ blob: 'x'.repeat(n) })).toBe(n + 12);
  });

  test('[OM-55] an entry {"blob":"x"*32756} measures 32,768 and *32757 measures 32,769', () => {
    expect(jsonSize({ blob: 'x'.repeat(32_756) })).toBe(32_768);
    expect(jsonSize({ blob: 'x'.repeat(32_757) })).toBe(32_769);
  });

  test('[OM-82] a string is measured like any value: "x"*32766 is 32,768, and JSON text in a string is escaped', () => {
    expect(jsonSize('x'.repeat(32_766))).toBe(32_768);
    expect(jsonSize('x'.repeat(32_767))).toBe(32_769);
    const text = JSON.stringify({ blob: 'x'.repeat(199_989) });
    expect(jsonSize(text)).toBeGreaterThan(200_000);
  });

  test('separators are ", " and ": " (reference json.dumps)', () => {
    expect(jsonSize({ a: 1, b: [true, null] })).toBe('{"a": 1, "b": [true, null]}'.length);
    expect(jsonSize([])).toBe(2);
    expect(jsonSize({})).toBe(2);
    expect(jsonSize([[], {}])).toBe('[[], {}]'.length);
  });

  test('every UTF-16 unit outside printable ASCII is escaped (\\uXXXX = 6, short escapes = 2)', () => {
    expect(stringSize('雪')).toBe(8);
    expect(stringSize('😀')).toBe(14); // surrogate pair: two \uXXXX
    expect(stringSize('"\\')).toBe(6);
    expect(stringSize('\n\t\r\b\f')).toBe(12);
    expect(stringSize('\u0000\u007f')).toBe(14);
    expect(jsonSize({ 雪: '雪x' })).toBe('{"\\u96ea": "\\u96eax"}'.length);
  });

  test('numbers: plain integers as digits, other numbers as the reference float repr', () => {
    // Expected texts are what Python's json.dumps writes for the value JavaScript serializes.
    const cases: [number, string][] = [
      [0, '0'],
      [-12, '-12'],
      [123456789012, '123456789012'],
      [1.5, '1.5'],
      [0.1, '0.1'],
      [123.456, '123.456'],
      [0.0001, '0.0001'],
      [0.00012, '0.00012'],
      [1e-7, '1e-07'],
      [1.5e-7, '1.5e-07'],
      [-2.5e-5, '-2.5e-05'],
      [1e21, '1e+21'],
      [1e22, '1e+22'],
      [3.14e100, '3.14e+100'],
    ];
    for (const [n, text] of cases) expect(numberSize(n), String(n)).toBe(text.length);
  });
});
