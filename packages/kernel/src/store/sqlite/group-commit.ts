import type Database from 'better-sqlite3';
import { LibosError } from '@libos/sdk';
import type { TableMemo } from '../store-memo.js';
import { RedoLog, redoLogPath, type RedoStatement, type RedoUnit } from './redo-log.js';
import { statementEffect } from './statement-effect.js';

/** When a batch of units is committed to SQLite: after this many units, this many bytes of log, or this long. */
export interface GroupCommitLimits {
  readonly maxUnits: number;
  readonly maxBytes: number;
  readonly maxDelayMs: number;
}

export const GROUP_COMMIT_LIMITS: GroupCommitLimits = { maxUnits: 256, maxBytes: 4 << 20, maxDelayMs: 20 };

/** The key in `libos_meta` holding the number of the last unit SQLite has committed. */
export const REDO_MARK_KEY = 'redo_unit';

const UNIT = 'libos_unit';
const MARK_SQL = 'insert into libos_meta (key, value) values (?, ?) on conflict (key) do update set value = excluded.value';

/** What a statement means to the redo log, decided once when it is prepared. */
export type StatementRole =
  | { readonly kind: 'read' }
  | { readonly kind: 'write' }
  | { readonly kind: 'savepoint' | 'release' | 'rollback_to'; readonly name: string };

const SAVEPOINT = /^\s*savepoint\s+("?)(\w+)\1\s*$/i;
const RELEASE = /^\s*release\s+(?:savepoint\s+)?("?)(\w+)\1\s*$/i;
const ROLLBACK_TO = /^\s*rollback\s+(?:transaction\s+)?to\s+(?:savepoint\s+)?("?)(\w+)\1\s*$/i;

export function statementRole(sql: string): StatementRole {
  const sp = SAVEPOINT.exec(sql) ?? undefined;
  if (sp) return { kind: 'savepoint', name: sp[2]! };
  const rel = RELEASE.exec(sql) ?? undefined;
  if (rel) return { kind: 'release', name: rel[2]! };
  const back = ROLLBACK_TO.exec(sql) ?? undefined;
  if (back) return { kind: 'rollback_to', name: back[2]! };
  if (/^\s*pragma\b/i.test(sql)) return { kind: 'read' };
  return statementEffect(sql).kind === 'none' ? { kind: 'read' } : { kind: 'write' };
}

/**
 * Group commit for the SQLite store (K-9.7). Each unit of work (a kysely transaction: a call, a phase of a quantum)
 * runs as a SAVEPOINT inside one long SQLite transaction, the batch; its net write statements are appended to the
 * redo log (`redo-log.ts`) with one `write` before the unit counts as committed. The batch is committed to SQLite
 * after `maxUnits` units, `maxBytes` of log or `maxDelayMs`, whichever comes first, and on close; then the log is
 * emptied. So SQLite writes each hot page once per batch instead of once per unit, and a crash loses nothing a
 * caller was told had committed: the next open replays the log (`replayRedoLog`). A write outside any unit first
 * commits the batch, then runs on its own as before. Durability is what `synchronous = NORMAL` gave: a unit survives
 * the process dying at any point; a power cut may lose the last ones.
 */
export class GroupCommit {
  readonly #sqlite: Database.Database;
  readonly #memo: TableMemo;
  readonly #location: string;
  readonly #limits: GroupCommitLimits;
  #log: RedoLog | undefined;
  #lastUnit = 0;
  /** The last unit SQLite has committed (what `libos_meta.redo_unit` says). */
  #committedUnit = 0;
  /** Set when SQLite dropped a batch and running it again failed: every later unit fails with it. */
  #poisoned: LibosError | undefined;
  /** The open unit's statements so far, and where each open savepoint began in them. */
  #unit: RedoStatement[] | null = null;
  #marks: { readonly name: string; readonly at: number }[] = [];
  /** Units in the log that SQLite has not committed yet (the log holds them, to redo if SQLite drops the batch). */
  #pending = 0;
  /** Control statements, prepared once. */
  readonly #statements = new Map<string, Database.Statement>();
  #timer: NodeJS.Timeout | undefined;
  #flushWhenIdle = false;

  /** Sends the unit's own SAVEPOINT, RELEASE and ROLLBACK TO: the store's `DeferredSavepoints` (K-9.19), or SQLite. */
  readonly #control: (sql: string) => void;

  constructor(
    sqlite: Database.Database,
    location: string,
    memo: TableMemo,
    limits: GroupCommitLimits = GROUP_COMMIT_LIMITS,
    control?: (sql: string) => void,
  ) {
    this.#sqlite = sqlite;
    this.#location = location;
    this.#memo = memo;
    this.#limits = limits;
    this.#control = control ?? ((sql) => this.#exec(sql));
  }

  /** Whether units are grouped (after `enable`, for a store on disk). */
  get enabled(): boolean {
    return this.#log !== undefined;
  }

  /** Starts grouping: from now on, units go to the redo log. Call once the store is migrated and recovered. */
  enable(): void {
    if (this.#log) return;
    this.#lastUnit = committedMark(this.#sqlite);
    this.#committedUnit = this.#lastUnit;
    this.#log = RedoLog.open(redoLogPath(this.#location));
  }

  /** A kysely transaction begins: a unit opens (and the batch, if none is open). */
  begin(): void {
    if (!this.#log) return void this.#exec('begin');
    if (this.#poisoned) throw this.#poisoned;
    if (!this.#sqlite.inTransaction) this.#exec('begin');
    this.#control(`savepoint ${UNIT}`);
    this.#unit = [];
    this.#marks = [];
  }

  /** A kysely transaction commits: the unit goes to the log, then its savepoint is released into the batch. */
  commit(): void {
    if (!this.#log) return void this.#exec('commit');
    const statements = this.#unit ?? [];
    this.#unit = null;
    if (statements.length > 0) {
      const unit: RedoUnit = { n: this.#lastUnit + 1, statements };
      try {
        this.#log.append(unit);
      } catch (err) {
        this.#undoUnit();
        throw this.#logFault(err);
      }
      this.#lastUnit = unit.n;
      this.#pending++;
    }
    this.#control(`release ${UNIT}`);
    this.#afterUnit();
  }

  /** A kysely transaction rolls back: the unit's savepoint is undone; the batch's committed units stay. */
  rollback(): void {
    if (!this.#log) {
      this.#memo.wroteAll();
      if (this.#sqlite.inTransaction) this.#exec('rollback');
      return;
    }
    const open = this.#unit !== null;
    this.#unit = null;
    if (open) this.#undoUnit();
    this.#afterUnit();
  }

  /**
   * A statement ran: a write is kept for the log (its parameter array as kysely passed it: kysely never reuses one);
   * savepoints inside the unit keep only what was not rolled back.
   */
  ran(role: StatementRole, sql: string, params: readonly unknown[]): void {
    const unit = this.#unit;
    if (unit === null) return;
    switch (role.kind) {
      case 'read':
        return;
      case 'write':
        unit.push({ sql, params });
        return;
      case 'savepoint':
        this.#marks.push({ name: role.name, at: unit.length });
        return;
      case 'release': {
        const i = this.#marks.findLastIndex((m) => m.name === role.name);
        if (i !== -1) this.#marks.length = i;
        return;
      }
      case 'rollback_to': {
        const i = this.#marks.findLastIndex((m) => m.name === role.name);
        if (i !== -1) {
          unit.length = this.#marks[i]!.at;
          this.#marks.length = i + 1;
        }
        return;
      }
    }
  }

  /** A write is about to run outside any unit: commit the batch first, so the write is durable on its own. */
  beforeWrite(): void {
    if (this.#log && this.#unit === null && this.#sqlite.inTransaction) this.flush();
  }

  /** Commits the batch to SQLite now (or, inside a unit, as soon as the unit ends) and empties the log. */
  flush(): void {
    if (!this.#log) return;
    if (this.#poisoned) throw this.#poisoned;
    if (this.#unit !== null) {
      this.#flushWhenIdle = true;
      return;
    }
    this.#flushWhenIdle = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#sqlite.inTransaction) {
      this.#pending = 0;
      return;
    }
    this.#statement(MARK_SQL).run(REDO_MARK_KEY, String(this.#lastUnit));
    this.#exec('commit');
    this.#pending = 0;
    this.#committedUnit = this.#lastUnit;
    this.#log.reset(); // if this fails, the log keeps units the mark already covers: a replay skips them
  }

  /** Commits the batch and closes the log (removing its empty file). */
  close(): void {
    if (!this.#log) return;
    this.flush();
    this.#log.close({ remove: true });
    this.#log = undefined;
  }

  #afterUnit(): void {
    const log = this.#log!;
    if (this.#flushWhenIdle || this.#pending >= this.#limits.maxUnits || log.bytes >= this.#limits.maxBytes) {
      this.#commitBatchOrKeep();
    } else if (this.#pending > 0 && !this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#commitBatchOrKeep();
      }, this.#limits.maxDelayMs);
      this.#timer.unref();
    }
  }

  /**
   * Commits the batch when no caller is waiting on it (a unit's end, the timer). A failure is not the unit's: the log
   * holds every unit, so the batch stays for the next try (or the next open), and the failure is reported as a
   * process warning. If SQLite dropped the batch, its units are run again; if even that fails, the store is poisoned.
   */
  #commitBatchOrKeep(): void {
    try {
      this.flush();
    } catch (err) {
      if (this.#poisoned) return;
      const message = `libOS: committing a batch of units to ${this.#location} failed (${(err as Error).message})`;
      if (this.#pending === 0) {
        process.emitWarning(`${message} after SQLite committed it; the redo log is emptied at the next commit`);
        return;
      }
      if (this.#sqlite.inTransaction) {
        process.emitWarning(`${message}; its units stay in the redo log and the commit is tried again`);
        return;
      }
      try {
        this.#redoPending(err);
        process.emitWarning(`${message}; SQLite dropped it, so its units were run again from the redo log`);
      } catch (poisoned) {
        process.emitWarning((poisoned as Error).message);
      }
    }
  }

  /** Undoes the open unit's savepoint; if SQLite already dropped the whole batch, redoes its committed units. */
  #undoUnit(): void {
    this.#memo.wroteAll();
    if (this.#sqlite.inTransaction) {
      this.#control(`rollback to ${UNIT}`);
      this.#control(`release ${UNIT}`);
    } else {
      this.#redoPending(undefined);
    }
  }

  /**
   * SQLite rolled back the batch by itself (a full disk or an I/O error ends the transaction): the units it held are
   * in the log, so run them again in a new batch. If that fails too, the store is poisoned for this runtime; the
   * next open replays the log.
   */
  #redoPending(cause: unknown): void {
    if (this.#pending === 0) return;
    try {
      const units = RedoLog.read(this.#log!.path).filter((u) => u.n > this.#committedUnit);
      this.#exec('begin');
      for (const unit of units) for (const s of unit.statements) this.#sqlite.prepare(s.sql).run(s.params);
    } catch (err) {
      if (this.#sqlite.inTransaction) this.#exec('rollback');
      const why = `SQLite dropped a batch of ${this.#pending} committed unit(s) and running them again failed`;
      this.#poisoned = new LibosError(
        'store_poisoned',
        `store ${this.#location}: ${why} (${(err as Error).message}); reopen it to replay the log`,
        { details: { path: this.#location }, cause: new AggregateError([err, cause].filter((e) => e !== undefined)) },
      );
      throw this.#poisoned;
    }
  }

  #logFault(err: unknown): LibosError {
    const code = (err as NodeJS.ErrnoException).code;
    const path = redoLogPath(this.#location);
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      return new LibosError(
        'disk_full',
        `store ${this.#location} cannot grow: the disk is full (redo log ${path}: ${code}); the write was not made`,
        {
          details: { path: this.#location },
          cause: err,
        },
      );
    }
    return new LibosError('internal_error', `store ${this.#location}: cannot write the redo log ${path}: ${(err as Error).message}`, {
      details: { path: this.#location },
      cause: err,
    });
  }

  #exec(sql: string): void {
    this.#statement(sql).run();
  }

  #statement(sql: string): Database.Statement {
    let stmt = this.#statements.get(sql);
    if (!stmt) {
      stmt = this.#sqlite.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }
}

/** The last unit SQLite has committed, as `libos_meta.redo_unit` records it (0 before the first batch). */
function committedMark(sqlite: Database.Database): number {
  const row = sqlite.prepare('select value from libos_meta where key = ?').get(REDO_MARK_KEY) as { value: string } | undefined;
  return row ? Number(row.value) : 0;
}

/**
 * Replays, at open, the units a crashed runtime left in the redo log beyond the last one SQLite committed, in one
 * transaction, then empties the log. Returns how many units it replayed. A unit that fails to replay leaves the store
 * as it was and throws `store_corrupt` naming the log.
 */
export function replayRedoLog(sqlite: Database.Database, location: string): number {
  const path = redoLogPath(location);
  const units = RedoLog.read(path);
  if (units.length === 0) return 0;
  const mark = committedMark(sqlite);
  const todo = units.filter((u) => u.n > mark);
  if (todo.length > 0) {
    sqlite.prepare('begin').run();
    let current: RedoUnit | undefined;
    try {
      for (const unit of todo) {
        current = unit;
        for (const s of unit.statements) sqlite.prepare(s.sql).run(s.params);
      }
      sqlite.prepare(MARK_SQL).run(REDO_MARK_KEY, String(todo.at(-1)!.n));
      sqlite.prepare('commit').run();
    } catch (err) {
      if (sqlite.inTransaction) sqlite.prepare('rollback').run();
      const why = `unit ${current?.n} of the redo log ${path} does not replay (${(err as Error).message})`;
      throw new LibosError('store_corrupt', `store ${location}: ${why}; restore the store from a backup`, {
        details: { path: location, redo_log: path },
        cause: err,
      });
    }
  }
  return todo.length;
}
