import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalize, canonicalLength } from './canonical.js';
import type { JsonValue } from './json-value.js';
import { PayloadCell } from './payload-cell.js';
import { jsonSize } from './size.js';
import { codeOf } from './testing/code-of.js';

/** Appends through the cell as the tool does; returns the plan's outcome. */
function append(cell: PayloadCell, field: string, entry: JsonValue) {
  const plan = cell.planAppend(field, entry, jsonSize(entry));
  return { plan, undo: plan.apply() };
}

/** What the cell reports must equal what a full recomputation of its value gives. */
function expectConsistent(cell: PayloadCell): void {
  const value = cell.value();
  expect(cell.stats()).toEqual({ size: jsonSize(value), canonicalChars: canonicalLength(value) });
  expect(cell.canonical()).toEqual(canonicalize(value));
}

describe('PayloadCell: appends in O(entry)', () => {
  test('SIZE, CANON length and digest after any appends equal a full recomputation', () => {
    const key = fc.constantFrom('entries', 'notes', '', '__proto__', 'é', '\ud800', 'z"\\');
    const root = fc.oneof(
      fc.constant<JsonValue>([]),
      fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>,
      fc.dictionary(key, fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<JsonValue>),
    );
    const step = fc.record({ field: key, entry: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>, read: fc.boolean() });
    fc.assert(
      fc.property(root, fc.array(step, { maxLength: 8 }), (start, steps) => {
        const cell = new PayloadCell(structuredClone(start));
        for (const s of steps) {
          if (codeOf(() => append(cell, s.field, s.entry)) !== undefined) continue; // not a container / not a list
          if (s.read) expectConsistent(cell);
        }
        expectConsistent(cell);
      }),
      { numRuns: 300 },
    );
  });

  test('an append reads none of the entries already in the ledger', () => {
    let armed = false;
    const guard = <T extends object>(target: T): T =>
      new Proxy(target, {
        get: (t, p, r) => (armed ? fail(p) : Reflect.get(t, p, r)),
        ownKeys: (t) => (armed ? fail('ownKeys') : Reflect.ownKeys(t)),
        getOwnPropertyDescriptor: (t, p) => (armed ? fail(p) : Reflect.getOwnPropertyDescriptor(t, p)),
      });
    const fail = (what: PropertyKey): never => {
      throw new Error(`an existing entry was read (${String(what)})`);
    };
    const entries = Array.from({ length: 300 }, (_, i) => guard({ i, note: 'x'.repeat(80) }));
    const cell = new PayloadCell({ entries } as unknown as JsonValue);
    const before = cell.stats();
    armed = true;
    const { plan } = append(cell, 'entries', { i: 300 });
    expect(plan.length).toBe(301);
    expect(cell.stats().size).toBe(before.size + 2 + jsonSize({ i: 300 }));
    armed = false;
    expectConsistent(cell);
  });

  test('a value handed out before an append never changes, and values are frozen', () => {
    const cell = new PayloadCell({ entries: [{ x: 1 }] });
    const first = cell.value() as { entries: JsonValue[] };
    append(cell, 'entries', { x: 2 });
    append(cell, 'other', 3);
    expect(first).toEqual({ entries: [{ x: 1 }] });
    const second = cell.value() as { entries: JsonValue[] };
    expect(second).toEqual({ entries: [{ x: 1 }, { x: 2 }], other: [3] });
    expect(() => second.entries.push({ x: 9 })).toThrow(TypeError);
    expect(Object.keys(second)).toEqual(['entries', 'other']); // a new field comes last, as a spread would put it
  });

  test('undo puts back value, stats and digest, newest first, even after a read in between', () => {
    const cell = new PayloadCell([1]);
    const digest = cell.canonical().sha256;
    const stats = cell.stats();
    const a = append(cell, 'x', 2);
    expect(cell.value()).toEqual([1, 2]); // folds the tail into a new value
    const b = append(cell, 'x', 3);
    b.undo();
    expect(cell.value()).toEqual([1, 2]);
    a.undo();
    expect(cell.value()).toEqual([1]);
    expect(cell.stats()).toEqual(stats);
    expect(cell.canonical().sha256).toBe(digest);
    expect(append(cell, 'x', 4).plan.length).toBe(2);
    expect(cell.value()).toEqual([1, 4]);
  });

  test('a plan made before another append is refused when applied', () => {
    const cell = new PayloadCell({ entries: [] });
    const stale = cell.planAppend('entries', 1, 1);
    append(cell, 'entries', 2);
    expect(codeOf(() => stale.apply())).toBe('internal_error');
    expect(cell.value()).toEqual({ entries: [2] });
  });
});
