import { describe, expect, test } from 'vitest';
import { createPayloadStore } from './payload-store.js';

describe('PayloadStore', () => {
  test('get/set/delete/has, with null as a real payload', () => {
    const s = createPayloadStore();
    expect(s.has('o')).toBe(false);
    s.set('o', null);
    expect(s.has('o')).toBe(true);
    expect(s.get('o')).toBeNull();
    s.delete('o');
    expect(s.has('o')).toBe(false);
    expect(s.get('o')).toBeUndefined();
  });

  test('stored payloads cannot be changed through a handed-out reference', () => {
    const s = createPayloadStore();
    s.set('o', { entries: [{ x: 1 }] });
    const got = s.get('o') as { entries: { x: number }[] };
    expect(() => got.entries.push({ x: 2 })).toThrow(TypeError);
    expect(s.get('o')).toEqual({ entries: [{ x: 1 }] });
  });

  test('snapshot/restore round-trips and the snapshot stays reusable', () => {
    const s = createPayloadStore();
    s.set('a', 1);
    s.set('b', { k: 'v' });
    const snap = s.snapshot();
    s.delete('a');
    s.set('c', 3);
    s.restore(snap);
    expect([...s.snapshot().keys()].sort()).toEqual(['a', 'b']);
    s.delete('b');
    s.restore(snap);
    expect(s.get('b')).toEqual({ k: 'v' });
  });
});
