import { describe, expect, it } from 'vitest';
import { RoundRobin } from './round-robin.js';

describe('RoundRobin', () => {
  it('[K-9.13] orders the least recently scheduled first, a process never scheduled before all', () => {
    const rr = new RoundRobin();
    rr.ran('a');
    rr.ran('b');
    rr.ran('c');
    expect(rr.order(['c', 'b', 'a', 'new'])).toEqual(['new', 'a', 'b', 'c']);
    rr.ran('a');
    expect(rr.order(['a', 'b', 'c'])).toEqual(['b', 'c', 'a']);
  });

  it('[K-9.13] a runtime that has run many processes remembers at most its runnable set and the slack', () => {
    const rr = new RoundRobin(100);
    // 10,000 processes, each runnable for one round and then gone (as in a run of many short agents).
    for (let i = 0; i < 10_000; i++) {
      const pid = `p${i}`;
      rr.order([pid, 'sleeper']);
      rr.ran(pid);
    }
    expect(rr.size).toBeLessThanOrEqual(2 + 100 + 1); // the runnable set, the slack, the one that just ran
    // What it kept still orders: a process of the runnable set that ran keeps its place.
    rr.ran('sleeper');
    rr.ran('late');
    expect(rr.order(['late', 'sleeper', 'fresh'])).toEqual(['fresh', 'sleeper', 'late']);
  });

  it('[K-9.13] a process outside the runnable set keeps its place until the slack is spent', () => {
    const rr = new RoundRobin(100);
    rr.ran('waiter'); // ran first, then waits (not runnable) while 50 others run
    for (let i = 0; i < 50; i++) {
      rr.order([`p${i}`]);
      rr.ran(`p${i}`);
    }
    // Back in the runnable set: it ran longer ago than p49, and before a process never scheduled it is not.
    expect(rr.order(['p49', 'waiter', 'fresh'])).toEqual(['fresh', 'waiter', 'p49']);
  });
});
