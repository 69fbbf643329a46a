import { sqliteMigrationKit, type AuditEntry, type Clock, type IdSource, type ServiceScope } from '@libos/sdk';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { createAuthorityEngine, type AuthorityEngine } from '../../engine.js';
import type { Db } from '../store.js';

/** A settable clock. */
export interface FakeClock extends Clock {
  set(iso: string): void;
  advance(ms: number): void;
}

export function fakeClock(start = '2030-01-01T00:00:00.000Z'): FakeClock {
  let t = Date.parse(start);
  return { now: () => new Date(t), set: (iso) => (t = Date.parse(iso)), advance: (ms) => (t += ms) };
}

/** Deterministic ids: `<prefix>_<16 hex counter>`. */
export function counterIds(): IdSource {
  let n = 0;
  return { next: (prefix) => `${prefix}_${(++n).toString(16).padStart(16, '0')}` };
}

export interface EmittedEvent {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>> | undefined;
}

/** A real SQLite store with this package's migrations; `run` executes one transaction with a ServiceScope. */
export interface TestStore {
  readonly db: Db;
  readonly engine: AuthorityEngine;
  readonly clock: FakeClock;
  /** Committed events and audit entries only (a rolled-back transaction leaves none). */
  readonly events: EmittedEvent[];
  readonly audit: AuditEntry[];
  /** Runs `fn` in one transaction. `failEvents`/`failAudit` make the sinks throw (evidence failure). */
  run<T>(fn: (scope: ServiceScope) => Promise<T>, opts?: { failEvents?: boolean; failAudit?: boolean }): Promise<T>;
  close(): Promise<void>;
}

/** Counts rows that SELECTs naming `table` return (wraps `prepare` of a better-sqlite3 connection). */
export function countRowsRead(sqlite: Database.Database, table: string): { rows: number } {
  const counter = { rows: 0 };
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    const stmt = prepare(source);
    if (!stmt.reader || !source.includes(`"${table}"`)) return stmt;
    const all = stmt.all.bind(stmt);
    const get = stmt.get.bind(stmt);
    stmt.all = ((...params: unknown[]) => {
      const rows = all(...params);
      counter.rows += rows.length;
      return rows;
    }) as typeof stmt.all;
    stmt.get = ((...params: unknown[]) => {
      const row = get(...params);
      if (row !== undefined) counter.rows += 1;
      return row;
    }) as typeof stmt.get;
    return stmt;
  }) as typeof sqlite.prepare;
  return counter;
}

/** Sums the bytes of the values bound to statements that write (wraps `prepare` of a better-sqlite3 connection). */
export function countBytesWritten(sqlite: Database.Database): { bytes: number } {
  const counter = { bytes: 0 };
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    const stmt = prepare(source);
    if (stmt.reader) return stmt;
    const run = stmt.run.bind(stmt);
    stmt.run = ((...params: unknown[]) => {
      for (const p of params.flat()) counter.bytes += typeof p === 'string' ? Buffer.byteLength(p) : 8;
      return run(...params);
    }) as typeof stmt.run;
    return stmt;
  }) as typeof sqlite.prepare;
  return counter;
}

export async function createTestStore(
  opts: { file?: string; sqlite?: Database.Database; clock?: FakeClock; engine?: AuthorityEngine; migrate?: boolean } = {},
): Promise<TestStore> {
  const clock = opts.clock ?? fakeClock();
  const engine = opts.engine ?? createAuthorityEngine({ clock, ids: counterIds() });
  const database = opts.sqlite ?? new Database(opts.file ?? ':memory:');
  const db = new Kysely<Record<string, never>>({ dialect: new SqliteDialect({ database }) }) as unknown as Db;
  if (opts.migrate !== false) for (const m of engine.migrations) await m.up(db, sqliteMigrationKit(db));
  const events: EmittedEvent[] = [];
  const audit: AuditEntry[] = [];
  const store: TestStore = {
    db,
    engine,
    clock,
    events,
    audit,
    async run(fn, o = {}) {
      const pendingEvents: EmittedEvent[] = [];
      const pendingAudit: AuditEntry[] = [];
      const after: (() => void)[] = [];
      const rollback: (() => void)[] = [];
      try {
        const out = await db.transaction().execute(async (trx) => {
          const scope: ServiceScope = {
            store: trx,
            clock,
            events: {
              async emit(type, data) {
                if (o.failEvents) throw new Error('event sink failed');
                pendingEvents.push({ type, data });
              },
            },
            audit: {
              async record(entry) {
                if (o.failAudit) throw new Error('audit sink failed');
                pendingAudit.push(entry);
              },
            },
            afterCommit: (f) => after.push(f),
            onRollback: (f) => rollback.push(f),
            service<T>(name: string): T {
              if (name === 'capabilities') return engine.service(scope) as T;
              throw new Error(`no service ${name}`);
            },
            authorityFor: (pid) => engine.authority(scope, pid),
          };
          return fn(scope);
        });
        events.push(...pendingEvents);
        audit.push(...pendingAudit);
        for (const f of after) f();
        return out;
      } catch (err) {
        for (const f of rollback) f();
        throw err;
      }
    },
    close: () => db.destroy(),
  };
  return store;
}
