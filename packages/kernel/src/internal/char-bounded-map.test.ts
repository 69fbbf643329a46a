import { describe, expect, it } from 'vitest';
import { CharBoundedMap } from './char-bounded-map.js';

describe('CharBoundedMap', () => {
  it('[K-9.11] holds at most its bound of key characters: a set that would pass it starts the map over', () => {
    const memo = new CharBoundedMap<number>(10);
    memo.set('abcde', 1);
    memo.set('fghij', 2); // exactly 10: both kept
    expect([memo.get('abcde'), memo.get('fghij'), memo.size]).toEqual([1, 2, 2]);
    memo.set('k', 3); // 11 would pass 10
    expect([memo.has('abcde'), memo.get('k'), memo.size]).toEqual([false, 3, 1]);
  });
});
