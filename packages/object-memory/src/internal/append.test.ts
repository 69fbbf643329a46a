import { describe, expect, test } from 'vitest';
import { appendEntry } from './append.js';
import { codeOf } from './testing/code-of.js';

describe('append (spec §4)', () => {
  test('[OM-49] appending {"x":1} to a ledger gives list_field entries, length 1', () => {
    const before = { entries: [] };
    const r = appendEntry(before, 'entries', { x: 1 });
    expect(r).toEqual({ payload: { entries: [{ x: 1 }] }, listField: 'entries', length: 1 });
    expect(before).toEqual({ entries: [] }); // works on a copy
  });

  test('[OM-50] a missing list_field is created', () => {
    expect(appendEntry({ entries: [] }, 'notes', 'n')).toEqual({ payload: { entries: [], notes: ['n'] }, listField: 'notes', length: 1 });
  });

  test('[OM-51] a present non-list field is append_field_not_list', () => {
    expect(codeOf(() => appendEntry({ entries: 5 }, 'entries', 1))).toBe('append_field_not_list');
    expect(codeOf(() => appendEntry({ entries: null }, 'entries', 1))).toBe('append_field_not_list');
  });

  test('[OM-52] a root list ignores list_field and returns null', () => {
    expect(appendEntry([1], 'x', 2)).toEqual({ payload: [1, 2], listField: null, length: 2 });
  });

  test('[OM-53] string, number and null payloads are append_target_not_container', () => {
    for (const p of ['s', 3, null, true]) expect(codeOf(() => appendEntry(p, 'entries', 1))).toBe('append_target_not_container');
  });

  test('[OM-83] no dedupe: the same entry twice gives length 2', () => {
    const once = appendEntry({ entries: [] }, 'entries', { x: 1 });
    const twice = appendEntry(once.payload, 'entries', { x: 1 });
    expect(twice.length).toBe(2);
    expect(twice.payload).toEqual({ entries: [{ x: 1 }, { x: 1 }] });
  });

  test('"" is a key and "__proto__" stays an own field', () => {
    expect(appendEntry({}, '', 1).payload).toEqual({ '': [1] });
    const r = appendEntry({}, '__proto__', 1).payload as Record<string, unknown>;
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(r, '__proto__')).toBe(true);
  });
});
