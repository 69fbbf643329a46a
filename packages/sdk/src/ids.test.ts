import { describe, expect, test } from 'vitest';
import { isId, newId, sequentialIds } from './ids.js';

describe('ids', () => {
  test('newId gives <prefix>_<16 hex>, and ids stay distinct across many pool refills', () => {
    // 4,096-byte pool, 8 bytes an id: 3,000 ids cross five refills.
    const ids = Array.from({ length: 3_000 }, () => newId('evt'));
    for (const id of ids) expect(isId(id, 'evt')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(4, 8))).size).toBeGreaterThan(1_000); // random, not a counter
  });

  test('a prefix outside ^[a-z][a-z0-9]*$ is refused', () => {
    for (const bad of ['', 'Pid', '1x', 'a_b']) expect(() => newId(bad)).toThrow(TypeError);
  });

  test('sequentialIds counts across prefixes', () => {
    const ids = sequentialIds();
    expect([ids.next('pid'), ids.next('call')]).toEqual(['pid_0000000000000001', 'call_0000000000000002']);
  });
});
