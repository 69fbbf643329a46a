import { wire } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type Harness } from '../internal/testing/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('GET /api/snapshot', () => {
  it('an empty store: nothing to show, cursor 0, nothing truncated', async () => {
    h = await startServer();
    expect((await h.api('/api/snapshot')).body).toEqual({ db: h.rt.location, cursor: 0, processes: [], human_requests: [], events: [] });
  });

  it('is bounded: the newest processes, pending requests and events, with _truncated naming what was cut; cursor is the head', async () => {
    h = await startServer({ snapshotLimits: { processes: 2, events: 3 } });
    const pids: string[] = [];
    for (const goal of ['a', 'b', 'c']) pids.push((await h.rt.spawn({ goal: goal.repeat(300) })).pid);
    const all = await h.rt.events({ limit: 10_000 });
    const s = (await h.api('/api/snapshot')).body;
    expect(s.cursor).toBe(all.at(-1)!.seq);
    expect(s.processes.map((p: { pid: string }) => p.pid)).toEqual(pids.slice(1));
    expect(s.processes[0].goal).toHaveLength(200);
    expect(s.processes[0]).not.toHaveProperty('tool_table');
    expect(s.events).toEqual(all.slice(-3).map(wire.eventToWire));
    expect(s._truncated).toEqual({ processes: { shown: 2, total: 3 }, events: { shown: 3, total: all.length } });
  });
});
