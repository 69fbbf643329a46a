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

  test('an append changes neither a snapshot nor a value handed out before it; its undo brings the payload back', () => {
    const s = createPayloadStore();
    s.set('o', { entries: [1] });
    const handed = s.get('o');
    const snap = s.snapshot();
    const plan = s.planAppend('o', 'entries', 2, 1);
    expect([plan.listField, plan.length, plan.after]).toEqual(['entries', 2, { size: 19, canonicalChars: 17 }]);
    const undo = plan.apply();
    expect(s.get('o')).toEqual({ entries: [1, 2] });
    expect(s.stats('o')).toEqual({ size: 19, canonicalChars: 17 });
    expect(handed).toEqual({ entries: [1] });
    expect(snap.get('o')).toEqual({ entries: [1] });
    s.delete('o');
    undo();
    expect(s.get('o')).toEqual({ entries: [1] });
    expect(s.canonical('o')?.text).toBe('{"entries":[1]}');
  });

  test('planAppend on an oid with no cached payload is an internal error', () => {
    expect(() => createPayloadStore().planAppend('o', 'entries', 1, 1)).toThrow(/no payload is cached/);
  });
});
