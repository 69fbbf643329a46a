import { describe, expect, test } from 'vitest';
import { appendTarget } from './append.js';
import type { JsonValue } from './json-value.js';
import { PayloadCell } from './payload-cell.js';
import { jsonSize } from './size.js';
import { codeOf } from './testing/code-of.js';

/** One append through a payload cell, as the tool does it: plan, apply, read back. */
function appendEntry(payload: JsonValue, listField: string, entry: JsonValue) {
  const cell = new PayloadCell(payload);
  const plan = cell.planAppend(listField, entry, jsonSize(entry));
  plan.apply();
  return { payload: cell.value(), listField: plan.listField, length: plan.length };
}

describe('append', () => {
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
    const cell = new PayloadCell({ entries: [] });
    cell.planAppend('entries', { x: 1 }, jsonSize({ x: 1 })).apply();
    const twice = cell.planAppend('entries', { x: 1 }, jsonSize({ x: 1 }));
    twice.apply();
    expect(twice.length).toBe(2);
    expect(cell.value()).toEqual({ entries: [{ x: 1 }, { x: 1 }] });
  });

  test('"" is a key and "__proto__" stays an own field', () => {
    expect(appendEntry({}, '', 1).payload).toEqual({ '': [1] });
    const r = appendEntry({}, '__proto__', 1).payload as Record<string, unknown>;
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(Object.hasOwn(r, '__proto__')).toBe(true);
  });

  test('appendTarget names the list and changes nothing', () => {
    const payload = { entries: [1] };
    expect(appendTarget(payload, 'entries')).toEqual({ key: 'entries', list: [1] });
    expect(appendTarget(payload, 'notes')).toEqual({ key: 'notes', list: undefined });
    expect(appendTarget([1], 'x')).toEqual({ key: null, list: [1] });
    expect(payload).toEqual({ entries: [1] });
  });
});
