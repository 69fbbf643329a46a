import { preparedQuery, type StoreMemo } from '@libos/sdk';
import type { AuditRow, EventRow } from './append-log.js';
import type { KernelStore } from './kernel-database.js';
import { memoOf } from './memo-of.js';

/** Recent events and tool outcomes shown to the model each turn (turns are stateless). */
export const RECENT_EVENTS = 20;
export const RECENT_CALLS = 10;

/** One of a process's recent events, as `events` holds it. */
export interface RecentEvent {
  readonly seq: number;
  readonly type: string;
  /** JSON text. */
  readonly data: string;
}

/** One of a process's recent tool calls, as its `tool.call` audit row holds it. */
export interface RecentCall {
  readonly target: string | null;
  readonly decision: string | null;
  /** JSON text. */
  readonly details: string;
  readonly call_id: string | null;
}

/** The two history reads of every turn's prompt, compiled once per store. */
const RECENT_EVENTS_OF = preparedQuery(1, (db: KernelStore, [pid]) =>
  db.selectFrom('events').select(['seq', 'type', 'data']).where('pid', '=', pid!).orderBy('seq', 'desc').limit(RECENT_EVENTS),
);
const RECENT_CALLS_OF = preparedQuery(1, (db: KernelStore, [pid]) =>
  db
    .selectFrom('audit_records')
    .select(['target', 'decision', 'details', 'call_id'])
    .where('actor', '=', pid!)
    .where('action', '=', 'tool.call')
    .orderBy('seq', 'desc')
    .limit(RECENT_CALLS),
);

const EVENTS = ['events'];
const AUDIT = ['audit_records'];
/** Memo keys of the per-process lists: one map per table, valid while every write of the table since was the append log's. */
const EVENTS_KEY = 'recent-events';
const CALLS_KEY = 'recent-calls';
/** Processes whose lists a map keeps at most; past it the oldest goes (a miss reads the store). */
const LISTS_MOST = 256;

/** The lists of one table, and how many times the append log carried them over (a list read meanwhile may miss rows). */
export class Lists<T> {
  readonly byPid = new Map<string, readonly T[]>();
  carried = 0;
}

/**
 * The last `RECENT_EVENTS` events of `pid`, newest first. Kept per process in one map held in the store memo under
 * `events` (K-9.31): valid until a statement other than the SQLite append log writes the table (a rollback, an update,
 * any other insert), and written through by the append log (`appendedHistory`), so a turn reads none of them.
 *
 * @example
 * declare const db: KernelStore;
 * const lines = (await recentEvents(db, 'pid_1')).map((e) => `- ${e.type} ${e.data}`); // newest first
 */
export function recentEvents(db: KernelStore, pid: string): Promise<readonly RecentEvent[]> {
  return throughLists<RecentEvent>(db, EVENTS_KEY, EVENTS, pid, async () =>
    frozen((await db.executeQuery(RECENT_EVENTS_OF(db, [pid]))).rows as RecentEvent[]),
  );
}

/** The last `RECENT_CALLS` `tool.call` audit rows of `pid`, newest first; kept and written through like `recentEvents`. */
export function recentCalls(db: KernelStore, pid: string): Promise<readonly RecentCall[]> {
  return throughLists<RecentCall>(db, CALLS_KEY, AUDIT, pid, async () =>
    frozen((await db.executeQuery(RECENT_CALLS_OF(db, [pid]))).rows as RecentCall[]),
  );
}

const frozen = <T extends object>(rows: T[]): readonly T[] => Object.freeze(rows.map((r) => Object.freeze(r)));

/** `pid`'s list from the map the memo holds under `key`, else `load()`'s, kept in that map while it stays valid. */
async function throughLists<T>(db: KernelStore, key: string, tables: readonly string[], pid: string, load: () => Promise<readonly T[]>) {
  const memo = memoOf(db);
  if (!memo) return load();
  const lists = memo.peek<Lists<T>>(key, tables);
  if (lists) {
    const hit = lists.byPid.get(pid);
    if (hit) return hit;
    const carried = lists.carried;
    const list = await load();
    // Still held and not carried over an append since: no write of the table since the read, the list is its rows now.
    if (memo.peek(key, tables) === lists && lists.carried === carried) keep(lists, pid, list);
    return list;
  }
  // New lists, valid from before the load (a write during it leaves them stale, `StoreMemo.read`).
  let loaded: readonly T[] | undefined;
  const made = await memo.read<Lists<T>>(key, tables, async () => {
    const fresh = new Lists<T>();
    fresh.byPid.set(pid, (loaded = await load()));
    return fresh;
  });
  return loaded ?? made.byPid.get(pid) ?? load();
}

function keep<T>(lists: Lists<T>, pid: string, list: readonly T[]): void {
  const m = lists.byPid;
  m.delete(pid);
  if (m.size >= LISTS_MOST) m.delete(m.keys().next().value!);
  m.set(pid, list);
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * A process just created (its row inserted, none of its own rows written yet) has empty histories: the lists the memo
 * holds keep that, so its first turn reads nothing either. Call it before the new process emits anything. It assumes
 * no event or audit row names the pid before its `processes` row exists: true of every kernel and plugin path (a pid
 * comes from the id source at spawn); a row that named a pid guessed ahead of its spawn would be missing from that
 * process's first prompt.
 *
 * @example
 * declare const memo: StoreMemo;
 * newProcessHistories(memo, 'pid_new'); // in the spawn, right after the processes row is inserted
 */
export function newProcessHistories(memo: StoreMemo, pid: string): void {
  for (const [key, tables] of [
    [EVENTS_KEY, EVENTS],
    [CALLS_KEY, AUDIT],
  ] as const) {
    const lists = memo.peek<Lists<never>>(key, tables);
    if (lists && !lists.byPid.has(pid)) keep(lists, pid, NONE);
  }
}

/** The maps the memo held just before an append's statements (undefined: none held). */
export interface HeldHistory {
  readonly events: Lists<RecentEvent> | undefined;
  readonly calls: Lists<RecentCall> | undefined;
}

/**
 * The maps of recent histories the memo holds now (null: none). Call it before the append log's statements and
 * `appendedHistory` after them: each statement makes them stale, and only what was held just before can be carried
 * over.
 */
export function heldHistory(memo: StoreMemo): HeldHistory | null {
  const events = memo.peek<Lists<RecentEvent>>(EVENTS_KEY, EVENTS);
  const calls = memo.peek<Lists<RecentCall>>(CALLS_KEY, AUDIT);
  return events || calls ? { events, calls } : null;
}

/**
 * After the append log wrote `events` (their `seq`s in `eventSeqs`) and `audit`: in each map `held` before, the list
 * of every process with new rows gets them in front, and the memo holds the map again as the tables are now (the
 * lists of other processes are unchanged: they got no rows). Only where a row reads back exactly as written (SQLite's
 * text columns; PostgreSQL's `jsonb` reads back reformatted, so it never writes through).
 */
export function appendedHistory(
  memo: StoreMemo,
  held: HeldHistory,
  events: readonly EventRow[],
  eventSeqs: readonly number[],
  audit: readonly AuditRow[],
): void {
  if (held.events) {
    carry(held.events, RECENT_EVENTS, events, (r, i) =>
      r.pid === null ? null : { pid: r.pid, entry: { seq: eventSeqs[i]!, type: r.type, data: r.data } },
    );
    memo.write(EVENTS_KEY, EVENTS, held.events);
  }
  if (held.calls) {
    carry(held.calls, RECENT_CALLS, audit, (r) =>
      r.action === 'tool.call'
        ? { pid: r.actor, entry: { target: r.target, decision: r.decision, details: r.details, call_id: r.call_id } }
        : null,
    );
    memo.write(CALLS_KEY, AUDIT, held.calls);
  }
}

/** Puts the entries `rows` give (`entryOf`: null for a row no list shows) in front of the lists `lists` keeps. */
function carry<R, T extends object>(
  lists: Lists<T>,
  most: number,
  rows: readonly R[],
  entryOf: (row: R, index: number) => { readonly pid: string; readonly entry: T } | null,
): void {
  const fresh = new Map<string, T[]>();
  for (let i = rows.length - 1; i >= 0; i--) {
    const e = entryOf(rows[i]!, i);
    if (!e || !lists.byPid.has(e.pid)) continue; // not kept: the next read of its process reads the store
    let f = fresh.get(e.pid);
    if (!f) fresh.set(e.pid, (f = []));
    if (f.length < most) f.push(Object.freeze(e.entry));
  }
  for (const [pid, f] of fresh) lists.byPid.set(pid, Object.freeze([...f, ...lists.byPid.get(pid)!].slice(0, most)));
  lists.carried++;
}
