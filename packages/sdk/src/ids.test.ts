import { describe, expect, test } from 'vitest';
import { isId, newId, sequentialIds } from './ids.js';

describe('ids', () => {
  test('newId gives <prefix>_<16 hex>: distinct, in increasing order within a run, under a random run prefix', () => {
    const ids = Array.from({ length: 3_000 }, () => newId('evt'));
    for (const id of ids) expect(isId(id, 'evt')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // One run's ids sort in the order they were made, so a unique index on them grows in place.
    expect([...ids].sort()).toEqual(ids);
    const body = (id: string) => id.slice('evt_'.length);
    expect(new Set(ids.map((id) => body(id).slice(0, 10))).size).toBe(1);
    expect(body(ids[0]!).slice(0, 10)).not.toBe('0000000000');
  });

  test('a prefix outside ^[a-z][a-z0-9]*$ is refused', () => {
    for (const bad of ['', 'Pid', '1x', 'a_b']) expect(() => newId(bad)).toThrow(TypeError);
  });

  test('sequentialIds counts across prefixes', () => {
    const ids = sequentialIds();
    expect([ids.next('pid'), ids.next('call')]).toEqual(['pid_0000000000000001', 'call_0000000000000002']);
  });
});
