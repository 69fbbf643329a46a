import { describe, expect, it } from 'vitest';
import { kernelStores } from '../internal/testing/kernel-store.js';
import type { EventRow } from './append-log.js';
import { memoOf } from './memo-of.js';
import { appendedHistory, heldHistory, newProcessHistories, recentCalls, recentEvents } from './recent-history.js';

const kernelStore = kernelStores();

const row = (pid: string, type: string): EventRow => ({ id: `evt_${type}`, ts: '2031-01-01T00:00:00.000Z', pid, type, data: '{}' });

/** The store of a test, with its reads of `events` counted. */
async function countedStore() {
  const s = await kernelStore();
  const run = s.db.executeQuery.bind(s.db);
  const counted = { reads: 0 };
  s.db.executeQuery = ((q: Parameters<typeof run>[0]) => {
    counted.reads++;
    return run(q);
  }) as typeof s.db.executeQuery;
  return { s, memo: memoOf(s.db)!, counted };
}

describe('recent histories (K-9.31)', () => {
  it('[K-9.31] a list is kept once read and extended by what the append log carries over', async () => {
    const { s, memo, counted } = await countedStore();
    expect(await recentEvents(s.db, 'pid_a')).toEqual([]);
    const held = heldHistory(memo)!;
    appendedHistory(memo, held, [row('pid_a', 'one'), row('pid_b', 'other'), row('pid_a', 'two')], [7, 8, 9], []);
    expect((await recentEvents(s.db, 'pid_a')).map((e) => [e.seq, e.type])).toEqual([
      [9, 'two'],
      [7, 'one'],
    ]);
    expect(counted.reads).toBe(1);
  });

  it('[K-9.31] a list read while the append log carried the lists over is not kept: it may lack the new rows', async () => {
    const { s, memo, counted } = await countedStore();
    await recentEvents(s.db, 'pid_a'); // the lists are held
    const reading = recentEvents(s.db, 'pid_b'); // not kept yet: read from the store
    appendedHistory(memo, heldHistory(memo)!, [row('pid_b', 'new')], [1], []); // meanwhile, an append of pid_b's rows
    await reading;
    await recentEvents(s.db, 'pid_b'); // read again: what the first read found may predate the append
    await recentEvents(s.db, 'pid_b'); // now kept
    expect(counted.reads).toBe(3);
  });
});

describe('a new process (K-9.31)', () => {
  it('[K-9.31] a process created while the lists are held has empty histories without a read, then carries its rows', async () => {
    const { s, memo, counted } = await countedStore();
    await recentEvents(s.db, 'pid_a'); // the lists are held
    newProcessHistories(memo, 'pid_new');
    expect(await recentEvents(s.db, 'pid_new')).toEqual([]);
    expect(await recentCalls(s.db, 'pid_new')).toEqual([]);
    appendedHistory(memo, heldHistory(memo)!, [row('pid_new', 'process_created')], [3], []);
    expect((await recentEvents(s.db, 'pid_new')).map((e) => e.type)).toEqual(['process_created']);
    expect(counted.reads).toBe(2); // pid_a's events, and the calls (their lists were not held yet)
  });
});
