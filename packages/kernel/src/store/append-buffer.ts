import { PostgresAdapter, type ControlledTransaction } from 'kysely';
import type { AppendLog, AuditRow, EventRow } from './append-log.js';
import { withCommit } from './commit-ride.js';
import { isDeferredMiss } from './deferred-writes.js';
import { commitTransaction } from './direct-queries.js';
import type { KernelDatabase, KernelStore, KernelTransaction } from './kernel-database.js';
import { memoOf } from './memo-of.js';
import { appendStatement } from './postgres/append-statement.js';
import { appendedHistory, heldHistory } from './recent-history.js';

/** What learns a row's `seq` when it is written: the event or audit record the bus emits after the commit. */
interface Sequenced {
  seq: number;
}

/** A buffered row and the record whose `seq` it fills in. */
interface Pending<R> {
  readonly row: R;
  readonly record: Sequenced;
}

/** Rows of each table one PostgreSQL statement carries at most (13 columns a pair: far below 65,535 parameters). */
const PG_ROWS_PER_INSERT = 1_000;

/**
 * What rolling a savepoint back restores (`AppendBuffer.mark`): the rows that were pending when it opened, emitted by
 * savepoints that ended well before it. A flush inside the savepoint may have written them in it, and its ROLLBACK TO
 * then undid that write, so they are pending again. A mark names the pending arrays and their lengths and copies
 * nothing: the arrays only grow (`flush` and `rollbackTo` put new ones in their place), so a prefix never changes.
 */
export interface AppendMark {
  readonly events: readonly Pending<EventRow>[];
  readonly eventsLength: number;
  readonly audit: readonly Pending<AuditRow>[];
  readonly auditLength: number;
}

/**
 * The `events` and `audit_records` rows emitted in one open transaction (a unit's, or a top-level one's) and not
 * written yet (issues 9 and 15: one statement per row was most of a call's statements). The rows of every savepoint
 * that ended well wait here until the transaction ends or something reads those tables (`flushAppends`), and are
 * then written as one multi-row insert per table (K-9.27): an agent step's two dozen savepoints no longer write a
 * pair of inserts each. A savepoint that rolls back drops the rows it emitted and keeps those pending before it
 * (`mark`, `rollbackTo`); an insert that fails fails the savepoint it ran in, or at the end the transaction, whole.
 */
export class AppendBuffer {
  #events: Pending<EventRow>[] = [];
  #audit: Pending<AuditRow>[] = [];

  readonly #postgres: boolean;

  constructor(
    private readonly trx: KernelTransaction,
    private readonly log: AppendLog | undefined,
  ) {
    this.#postgres = trx.getExecutor().adapter instanceof PostgresAdapter;
  }

  /** Buffers an event row; `record.seq` is set when the row is written. */
  event(row: EventRow, record: Sequenced): void {
    this.#events.push({ row, record });
  }

  /** Buffers an audit row; `record.seq` is set when the row is written. */
  audit(row: AuditRow, record: Sequenced): void {
    this.#audit.push({ row, record });
  }

  /** The rows pending now, to restore when the savepoint about to open rolls back (`rollbackTo`). */
  mark(): AppendMark {
    return { events: this.#events, eventsLength: this.#events.length, audit: this.#audit, auditLength: this.#audit.length };
  }

  /**
   * A savepoint opened at `mark` rolled back: the rows it emitted are dropped, and the rows pending when it opened
   * are pending again, also when a flush inside it wrote them (the ROLLBACK TO undid that write; their `seq`s are set
   * anew when they are written again).
   */
  rollbackTo(mark: AppendMark): void {
    this.#events = mark.events.slice(0, mark.eventsLength);
    this.#audit = mark.audit.slice(0, mark.auditLength);
  }

  /**
   * Writes the pending rows, in emission order. With an append log (SQLite), at most one statement per table (it
   * chunks very large ones); through kysely (PostgreSQL), one statement for both tables per 1,000 rows of each
   * (`appendStatement`), the last one marked to carry the COMMIT when `commit` is set (`commitWithAppends`).
   */
  async flush(commit = false): Promise<void> {
    const events = this.#events;
    const audit = this.#audit;
    this.#events = [];
    this.#audit = [];
    if (this.log) {
      const eventRows = events.map((p) => p.row);
      const auditRows = audit.map((p) => p.row);
      // The turn histories the memo holds for these rows' processes are extended, not read again (K-9.31).
      const memo = memoOf(this.trx);
      const held = memo ? heldHistory(memo) : null;
      const eventSeqs = events.length > 0 ? this.log.events(eventRows) : [];
      this.#sequence(events, eventSeqs);
      if (audit.length > 0) this.#sequence(audit, this.log.audit(auditRows));
      if (memo && held) appendedHistory(memo, held, eventRows, eventSeqs, auditRows);
      return;
    }
    // `returning` names each row's id (ids are unique across both tables), so no order of the rows is assumed.
    const seqOf = new Map<string, number>();
    for (let e = 0, a = 0; e < events.length || a < audit.length; ) {
      const someEvents = events.slice(e, (e += PG_ROWS_PER_INSERT)).map((p) => p.row);
      const someAudit = audit.slice(a, (a += PG_ROWS_PER_INSERT)).map((p) => p.row);
      const last = e >= events.length && a >= audit.length;
      for (const r of await this.#insert(someEvents, someAudit, commit && last)) seqOf.set(r.id, Number(r.seq));
    }
    for (const p of events) p.record.seq = seqOf.get(p.row.id)!;
    for (const p of audit) p.record.seq = seqOf.get(p.row.id)!;
  }

  /**
   * Inserts rows of both tables: on PostgreSQL in one statement (`appendStatement`), marked to carry the COMMIT when
   * `commit` is set; on another dialect (SQLite without its append log, in tests) one kysely insert per table.
   */
  async #insert(events: EventRow[], audit: AuditRow[], commit: boolean): Promise<readonly { id: string; seq: unknown }[]> {
    if (this.#postgres) {
      const query = appendStatement(events, audit);
      return (await this.trx.executeQuery(commit ? withCommit(query) : query)).rows;
    }
    const rows: { id: string; seq: unknown }[] = [];
    if (events.length > 0) rows.push(...(await this.trx.insertInto('events').values(events).returning(['id', 'seq']).execute()));
    if (audit.length > 0) rows.push(...(await this.trx.insertInto('audit_records').values(audit).returning(['id', 'seq']).execute()));
    return rows;
  }

  #sequence(rows: readonly Pending<unknown>[], seqs: readonly number[]): void {
    for (let i = 0; i < rows.length; i++) rows[i]!.record.seq = seqs[i]!;
  }

  get empty(): boolean {
    return this.#events.length === 0 && this.#audit.length === 0;
  }
}

const buffers = new WeakMap<object, AppendBuffer>();

/** The append buffer of the transaction `trx` (made on first use; it goes when the transaction object does). */
export function appendBufferOf(trx: KernelTransaction, log: AppendLog | undefined): AppendBuffer {
  let b = buffers.get(trx);
  if (!b) buffers.set(trx, (b = new AppendBuffer(trx, log)));
  return b;
}

/**
 * Writes the `events` and `audit_records` rows still pending on `db` (a transaction's or unit's store handle; on any
 * other handle, nothing). Every read of those tables that may run inside a transaction calls it first, so the
 * transaction reads its own rows as it did when each row was written at once. With `commit`, the last statement
 * carries the transaction's COMMIT where the driver can send it so (PostgreSQL, K-15.21).
 *
 * @example
 * declare const trx: KernelStore;
 * await flushAppends(trx);
 * const head = await trx.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
 */
export async function flushAppends(db: KernelStore, commit = false): Promise<void> {
  const b = buffers.get(db);
  if (b && !b.empty) await b.flush(commit);
}

const APPEND_FAILURES = new WeakSet<object>();

/**
 * Whether `err` failed the writing of a transaction's pending `events` and `audit_records` rows at its end
 * (`commitWithAppends`; a deferred guarded write's miss sent with them is not one): inside a unit those rows are
 * the work of savepoints that ended well (K-9.27), so the unit failed whole where each savepoint once failed alone. A
 * quantum fails its process for it, as for a failure inside the unit.
 */
export const isAppendFailure = (err: unknown): boolean => APPEND_FAILURES.has(err as object); // false for a non-object

/**
 * Ends the transaction `trx` begun on the root handle `db`: writes its pending `events` and `audit_records` rows, then
 * COMMIT. On PostgreSQL the COMMIT goes in the same round trip as those rows (K-15.21): a call is one round trip
 * shorter; if the rows fail, nothing committed and the caller rolls back as after any failed statement (the error
 * marked, `isAppendFailure`). On SQLite a transaction begun at once on the free connection commits at once too (K-9.26).
 *
 * @example
 * declare const db: KernelStore;
 * declare const trx: ControlledTransaction<KernelDatabase>; // begun on `db` (`beginTransaction`)
 * await commitWithAppends(db, trx);
 */
export async function commitWithAppends(db: KernelStore, trx: ControlledTransaction<KernelDatabase>): Promise<void> {
  try {
    await flushAppends(trx, true);
  } catch (err) {
    if (typeof err === 'object' && err !== null && !isDeferredMiss(err)) APPEND_FAILURES.add(err);
    throw err;
  }
  await commitTransaction(db, trx);
}
