// Events across hosts (issue 15, K-15.12): every host's watchers (SSE, MCP, the background scheduler) get the events
// all hosts commit, in `seq` order, each once; a row whose `seq` was allocated but not yet committed holds the feed
// back until its transaction ends, and a rolled-back one is passed over.
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime, type RuntimeEvent } from '@libos/kernel';
import { session } from '@libos/session';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_feed');
const open = (id: string) => openRuntime({ path: url, plugins: [capabilities(), session()], host: { id, leaseMs: 1000 } });

const until = async (what: string, test: () => boolean) => {
  const end = Date.now() + 10_000;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.skipIf(unavailable !== null)('[K-15.12] the event feed of a shared store', () => {
  let a: Runtime;
  let b: Runtime;
  let raw: pg.Client;
  const seen: RuntimeEvent[] = [];

  beforeAll(async () => {
    a = await open('feed-a');
    b = await open('feed-b');
    a.watch({ event: (e) => void seen.push(e) });
    raw = new pg.Client({ connectionString: PG_URL });
    await raw.connect();
    await raw.query(`set search_path to ${schema}`);
  });

  afterAll(async () => {
    await raw?.end();
    await a?.close();
    await b?.close();
    await dropSchema(schema);
  });

  const insertEvent = (type: string) =>
    raw.query(`insert into events (id, ts, pid, type, data) values ($1, now(), null, $2, '{}') returning seq`, [`evt_raw_${type}`, type]);

  it('[K-15.12] a host watching sees the events another host commits, in seq order, each once', async () => {
    const p = await b.spawn({ goal: 'seen from host a' });
    await until('host b spawn to reach host a', () => seen.some((e) => e.type === 'process_created' && e.pid === p.pid));
    await a.spawn({ goal: 'a commit of its own' });
    await until('host a own spawn', () => seen.filter((e) => e.type === 'process_created').length >= 2);
    const seqs = seen.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(await a.lastEventSeq()).toBe(seqs.at(-1));
  });

  it('[K-15.12] a row allocated but not committed holds later events back; it comes first once committed', async () => {
    await raw.query('begin');
    const held = Number((await insertEvent('held')).rows[0].seq);
    const p = await b.spawn({ goal: 'committed after the held row was allocated' });
    await new Promise((r) => setTimeout(r, 600)); // three polls: nothing past the held seq may be delivered
    expect(seen.some((e) => e.pid === p.pid)).toBe(false);
    expect(await a.lastEventSeq()).toBe(held - 1);
    await raw.query('commit');
    await until('the spawn after the held row', () => seen.some((e) => e.pid === p.pid));
    const i = seen.findIndex((e) => e.seq === held);
    expect(seen[i]?.type).toBe('held');
    expect(seen.slice(i + 1).every((e) => e.seq > held)).toBe(true);
  });

  it('[K-15.12] a rolled-back row leaves a hole the feed passes over', async () => {
    await raw.query('begin');
    const gone = Number((await insertEvent('gone')).rows[0].seq);
    await raw.query('rollback');
    const p = await b.spawn({ goal: 'after a rolled-back event' });
    await until('the spawn after the hole', () => seen.some((e) => e.pid === p.pid));
    expect(seen.some((e) => e.seq === gone)).toBe(false);
    const seqs = seen.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
  });
});
