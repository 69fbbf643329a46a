import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostileArguments, memberPaths, nested, ownKeyObject, POLLUTION_MARKER, withAt, withOwnKey } from './hostile-values.js';

describe('hostile-values', () => {
  it('an own __proto__ key is data: the prototype stays Object.prototype and JSON carries the key', () => {
    const o = withOwnKey({ a: 1 }, '__proto__', { [POLLUTION_MARKER]: true });
    expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
    expect(Object.keys(o)).toEqual(['a', '__proto__']);
    expect(JSON.stringify(o)).toBe(`{"a":1,"__proto__":{"${POLLUTION_MARKER}":true}}`);
    expect(JSON.stringify(ownKeyObject('constructor', 1))).toBe('{"constructor":1}');
    expect(({} as Record<string, unknown>)[POLLUTION_MARKER]).toBeUndefined();
  });

  it('withAt replaces one nested member and copies the containers on its way; memberPaths lists shallowest first', () => {
    const v = { a: [{ b: 1 }, 2], c: 'x' };
    expect(memberPaths(v)).toEqual([['a'], ['c'], ['a', 0], ['a', 1], ['a', 0, 'b']]);
    const w = withAt(v, ['a', 0, 'b'], null) as typeof v;
    expect(w).toEqual({ a: [{ b: null }, 2], c: 'x' });
    expect(v.a[0]).toEqual({ b: 1 });
    expect(w.a[1]).toBe(2);
  });

  it('nested builds the asked depth without recursion', () => {
    let v = nested(10_000, 'object') as Record<string, unknown>;
    let depth = 0;
    while (typeof v === 'object') {
      v = v.a as Record<string, unknown>;
      depth += 1;
    }
    expect(depth).toBe(10_000);
  });

  it('hostile arguments include whole non-objects and own __proto__ keys, and never touch a prototype', () => {
    const valid = fc.record({ name: fc.string(), items: fc.array(fc.record({ id: fc.string() }), { minLength: 1, maxLength: 2 }) });
    const samples = fc.sample(hostileArguments(valid, ['name', 'items'], { maxDepth: 200 }), { seed: 9, numRuns: 300 });
    expect(samples.length).toBe(300);
    expect(samples.filter((s) => typeof s !== 'object' || s === null || Array.isArray(s)).length).toBeGreaterThan(0);
    expect(samples.filter((s) => typeof s === 'object' && s !== null && Object.hasOwn(s, '__proto__')).length).toBeGreaterThan(0);
    expect(Object.prototype).not.toHaveProperty(POLLUTION_MARKER);
  });
});
