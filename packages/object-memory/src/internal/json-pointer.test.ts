import { describe, expect, test } from 'vitest';
import { parsePointer, resolvePointer } from './json-pointer.js';
import { codeOf } from './testing/code-of.js';

describe('JSON pointer (RFC 6901)', () => {
  const doc = { nested: { 'a/b': { '~key': [0, { name: '雪' }] } } };

  test('[OM-43] /nested/a~1b/~0key/1 selects {"name":"雪"}', () => {
    expect(parsePointer('/nested/a~1b/~0key/1')).toEqual(['nested', 'a/b', '~key', '1']);
    expect(resolvePointer(doc, parsePointer('/nested/a~1b/~0key/1'))).toEqual({ name: '雪' });
  });

  test('[OM-44] "nested" and "/a~2" are pointer_syntax; a trailing "~" too', () => {
    expect(codeOf(() => parsePointer('nested'))).toBe('pointer_syntax');
    expect(codeOf(() => parsePointer('/a~2'))).toBe('pointer_syntax');
    expect(codeOf(() => parsePointer('/a~'))).toBe('pointer_syntax');
  });

  test('[OM-44] /missing, /l/01, /l/-, /l/9, /scalar/x are pointer_unresolved', () => {
    const v = { l: [1, 2], scalar: 5 };
    for (const p of ['/missing', '/l/01', '/l/-', '/l/9', '/scalar/x', '/l/1/x']) {
      expect(
        codeOf(() => resolvePointer(v, parsePointer(p))),
        p,
      ).toBe('pointer_unresolved');
    }
    expect(resolvePointer(v, parsePointer('/l/0'))).toBe(1);
  });

  test('[OM-44] "/" selects key "" and "" selects the whole value', () => {
    expect(resolvePointer({ '': 1 }, parsePointer('/'))).toBe(1);
    expect(resolvePointer(doc, parsePointer(''))).toBe(doc);
  });

  test('inherited properties are not keys', () => {
    expect(codeOf(() => resolvePointer({}, parsePointer('/toString')))).toBe('pointer_unresolved');
    expect(codeOf(() => resolvePointer({ a: 1 }, parsePointer('/__proto__')))).toBe('pointer_unresolved');
  });
});
