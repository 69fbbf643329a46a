import { describe, expect, it } from 'vitest';
import { checkPathText, checkText, isUtf8, MAX_PATH_CHARS } from './path-text.js';

const reasonOf = (fn: () => void) => {
  try {
    fn();
    return null;
  } catch (err) {
    return { code: (err as { code: string }).code, reason: (err as { details: { reason: string } }).details.reason };
  }
};

describe('checkPathText', () => {
  it.each([
    ['', 'empty_path'],
    ['a\u0000b', 'nul_byte'],
    ['bad\ud800name', 'not_utf8'],
    ['\udc00', 'not_utf8'],
    ['line\nbreak', 'control_character'],
    ['src/*', 'wildcard_in_path'],
    ['x'.repeat(MAX_PATH_CHARS + 1), 'path_too_long'],
  ])('refuses %j as invalid_arguments (%s)', (value, reason) => {
    expect(reasonOf(() => checkPathText('path', value))).toEqual({ code: 'invalid_arguments', reason });
  });

  it('accepts ordinary names, non-ASCII UTF-8 and surrogate pairs', () => {
    for (const v of ['src/a.ts', '../x', 'é/ü.txt', 'emoji-😀.md', '/abs/path'])
      expect(reasonOf(() => checkPathText('path', v))).toBeNull();
  });
});

it('checkText refuses only unpaired surrogates', () => {
  expect(reasonOf(() => checkText('content', 'a\ud800'))).toEqual({ code: 'invalid_arguments', reason: 'not_utf8' });
  expect(reasonOf(() => checkText('content', 'tab\tand\nnewline 😀'))).toBeNull();
});

it('isUtf8 tells UTF-8 from other bytes', () => {
  expect(isUtf8(Buffer.from('héllo'))).toBe(true);
  expect(isUtf8(Buffer.from([0x66, 0xff, 0xfe]))).toBe(false);
});
