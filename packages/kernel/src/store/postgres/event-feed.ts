import { sql } from 'kysely';
import type { RuntimeEvent } from '../../events/event-bus.js';
import type { KernelStore } from '../kernel-database.js';

/** Events read at most per poll; a full page polls again at once. */
export const FEED_PAGE = 500;

interface Hole {
  readonly seq: number;
  /** Transactions in progress when the hole was first seen: one of them may still commit the missing row. */
  readonly suspects: readonly string[];
}

/** `pg_current_snapshot()` as text, `xmin:xmax:xip,…`: the transactions in progress at the statement's snapshot. */
const inProgress = (snapshot: string): Set<string> => new Set((snapshot.split(':')[2] ?? '').split(',').filter((x) => x !== ''));

/**
 * Every host's view of the events all hosts commit to a shared PostgreSQL store (issue 15), in `seq` order with no
 * gaps skipped too soon, so SSE streams and replays keep their rules (`seq` increasing, each at most once) across
 * hosts. `seq` is an identity: allocated at insert, not at commit, so a row with a lower `seq` can commit after a
 * higher one. Each poll reads, in one statement (one snapshot), the events past the frontier and the transactions in
 * progress. A missing `seq` below a visible row is a hole: its writer was in progress then (it may still commit) or
 * rolled back (never). The feed waits at a hole until every transaction that was in progress when it first saw the
 * hole has ended, then reads once more and moves past it if the row is still absent.
 *
 * @example
 * declare const db: KernelStore;
 * const feed = new EventFeed(db, (e) => console.log(e.seq, e.type));
 * await feed.start(); // from the current head
 * await feed.poll();  // delivers what committed since, in order
 */
export class EventFeed {
  #frontier = 0;
  #hole: Hole | null = null;
  #running: Promise<void> | null = null;
  #again = false;

  constructor(
    private readonly db: KernelStore,
    private readonly deliver: (event: RuntimeEvent) => void,
  ) {}

  /** The highest `seq` delivered (or passed as a hole): every event up to it has been delivered once, in order. */
  get frontier(): number {
    return this.#frontier;
  }

  /** Starts at the store's current head: events committed before are read from the store, not delivered. */
  async start(): Promise<void> {
    const { rows } = await sql<{ head: number | null }>`select max(seq) as head from events`.execute(this.db);
    this.#frontier = Number(rows[0]?.head ?? 0);
  }

  /** Reads and delivers what committed since the last poll; concurrent calls share one read (and ask for one more). */
  poll(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          if (await this.#read()) this.#again = true;
        } while (this.#again);
      } finally {
        this.#running = null;
      }
    })();
    return this.#running;
  }

  /** One read; true when a full page came back (more may be waiting). */
  async #read(): Promise<boolean> {
    const page = sql`select seq, id, ts, pid, type, data from events where seq > ${this.#frontier} order by seq limit ${FEED_PAGE}`;
    const { rows } = await sql<{ snapshot: string; events: string | null }>`select pg_current_snapshot()::text as snapshot,
      (select json_agg(e order by e.seq) from (${page}) e) as events`.execute(this.db);
    const running = inProgress(rows[0]?.snapshot ?? '');
    const events = JSON.parse(rows[0]?.events ?? '[]') as {
      seq: number;
      id: string;
      ts: string;
      pid: string | null;
      type: string;
      data: Record<string, unknown>;
    }[];
    for (const e of events) {
      while (e.seq > this.#frontier + 1) {
        const seq = this.#frontier + 1;
        if (this.#hole?.seq !== seq) this.#hole = { seq, suspects: [...running] };
        // A suspect still in progress may yet commit `seq`: wait for it (the next poll reads again).
        if (this.#hole.suspects.some((x) => running.has(x))) return false;
        this.#hole = null;
        this.#frontier = seq;
      }
      this.#frontier = e.seq;
      this.deliver({ seq: e.seq, id: e.id, ts: new Date(e.ts).toISOString(), pid: e.pid, type: e.type, data: e.data });
    }
    return events.length === FEED_PAGE;
  }
}
