import { describe, expect, test } from 'vitest';
import { isOmitted, normalizeName, normalizeNamespace, pathParent, resolveNamespace } from './names.js';
import { codeOf } from './testing/code-of.js';

describe('namespace and name normalization', () => {
  test('[OM-6] " /proj/r/ " and "proj\\r" normalize to proj/r', () => {
    expect(normalizeNamespace(' /proj/r/ ')).toBe('proj/r');
    expect(normalizeNamespace('proj\\r')).toBe('proj/r');
  });

  test('[OM-7] "", "a//b", "a/./b", "a/../b", "a/ b" are invalid_namespace', () => {
    for (const ns of ['', '   ', '/', 'a//b', 'a/./b', 'a/../b', 'a/ b', '..'])
      expect(
        codeOf(() => normalizeNamespace(ns)),
        ns,
      ).toBe('invalid_namespace');
  });

  test('other characters, including ":", are allowed', () => {
    expect(normalizeNamespace('process:pid_0123456789abcdef/notes')).toBe('process:pid_0123456789abcdef/notes');
    expect(normalizeNamespace('a b/c')).toBe('a b/c');
  });

  test('path parent is the text before the last "/"', () => {
    expect(pathParent('a/b/c')).toBe('a/b');
    expect(pathParent('a')).toBeNull();
  });

  test("[OM-9] a blank or omitted namespace means the caller's process scope", () => {
    for (const raw of [null, undefined, '', '  ']) {
      expect(isOmitted(raw)).toBe(true);
      expect(resolveNamespace(raw, 'pid_0123456789abcdef')).toBe('process:pid_0123456789abcdef');
    }
    expect(resolveNamespace(' proj ', 'pid_0123456789abcdef')).toBe('proj');
  });

  test('[OM-22] "  notes  " is stored as notes', () => {
    expect(normalizeName('  notes  ')).toBe('notes');
  });

  test('[OM-23] "a/b", "a\\b", ".", "..", "   " are invalid_name', () => {
    for (const n of ['a/b', 'a\\b', '.', '..', '   ', ''])
      expect(
        codeOf(() => normalizeName(n)),
        n,
      ).toBe('invalid_name');
  });

  test('hardening bounds: namespace ≤1,024 and name ≤256 characters', () => {
    expect(normalizeName('n'.repeat(256))).toHaveLength(256);
    expect(codeOf(() => normalizeName('n'.repeat(257)))).toBe('invalid_name');
    expect(normalizeNamespace('a'.repeat(1024))).toHaveLength(1024);
    expect(codeOf(() => normalizeNamespace('a'.repeat(1025)))).toBe('invalid_namespace');
  });
});
