import { describe, expect, it } from 'vitest';
import { LibosError } from './errors.js';
import { assertJsonBounds, JSON_LIMITS } from './json-bounds.js';

/** `depth` arrays around `leaf`: nested(2) is [[1]]. */
const nested = (depth: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

const refusal = (fn: () => void): LibosError => {
  try {
    fn();
  } catch (err) {
    return err as LibosError;
  }
  throw new Error('expected a refusal');
};

describe('assertJsonBounds', () => {
  it('[K-8.6] accepts JSON up to the depth bound, refuses one level more naming the field and the bound', () => {
    expect(JSON_LIMITS.depth).toBe(100);
    expect(() => assertJsonBounds(nested(100), 'payload')).not.toThrow();
    expect(() => assertJsonBounds({ a: [{ b: nested(98) }] }, 'payload')).toThrow(/nested deeper than 100/);
    const e = refusal(() => assertJsonBounds(nested(101), 'payload'));
    expect(e).toBeInstanceOf(LibosError);
    expect(e.toJSON()).toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringMatching(/^payload: nested deeper than 100 levels/),
      details: { field: 'payload', limit: 'depth', max: 100 },
    });
  });

  it('[K-8.6] a value nested 200,000 deep is refused without overflowing the stack', () => {
    const e = refusal(() => assertJsonBounds(nested(200_000), 'args'));
    expect(e).toMatchObject({ code: 'invalid_arguments', details: { field: 'args', limit: 'depth' } });
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(refusal(() => assertJsonBounds(cyclic, 'x'))).toMatchObject({ code: 'invalid_arguments', details: { limit: 'depth' } });
  });

  it('[K-8.6] bounds the number of values and, when asked, the bytes of the JSON text', () => {
    expect(() => assertJsonBounds(new Array(JSON_LIMITS.nodes - 1).fill(0), 'list')).not.toThrow();
    expect(refusal(() => assertJsonBounds(new Array(JSON_LIMITS.nodes).fill(0), 'list'))).toMatchObject({
      details: { field: 'list', limit: 'nodes', max: 100_000 },
    });
    expect(() => assertJsonBounds('x'.repeat(8), 's', { maxBytes: 10 })).not.toThrow();
    expect(refusal(() => assertJsonBounds('雪'.repeat(4), 's', { maxBytes: 10 }))).toMatchObject({
      message: 's: is 14 bytes of JSON; at most 10 are accepted',
    });
  });

  it('[K-8.6] refuses what is not JSON; an undefined object property is skipped as JSON.stringify does', () => {
    expect(() => assertJsonBounds({ a: undefined, b: null, c: 'x', d: true, e: -1.5 }, 'v')).not.toThrow();
    for (const bad of [NaN, Infinity, undefined, () => 1, Symbol('s'), 1n, new Date(0), new Map(), [undefined]]) {
      expect(refusal(() => assertJsonBounds({ k: [bad] }, 'v'))).toMatchObject({
        code: 'invalid_arguments',
        details: { field: 'v', limit: 'json' },
      });
    }
  });
});
