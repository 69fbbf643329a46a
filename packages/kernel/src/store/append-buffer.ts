import type { AppendLog, AuditRow, EventRow } from './append-log.js';
import type { KernelStore, KernelTransaction } from './kernel-database.js';

/** What learns a row's `seq` when it is written: the event or audit record the bus emits after the commit. */
interface Sequenced {
  seq: number;
}

interface Pending<R> {
  readonly row: R;
  readonly record: Sequenced;
}

/** Rows a PostgreSQL statement carries at most (8 columns each: far below the 65,535 parameters of one statement). */
const PG_ROWS_PER_INSERT = 1_000;

/**
 * The `events` and `audit_records` rows emitted in one open transaction (a unit's, or a top-level one's) and not
 * written yet (issues 9 and 15: one statement per row was most of a call's statements). `transaction.ts` writes them
 * as one multi-row insert per table when the savepoint or transaction that emitted them ends well, before its
 * RELEASE or COMMIT, so a failed insert still fails exactly that savepoint; a savepoint that rolls back drops them.
 * Rows are only ever pending for the innermost open savepoint: opening a nested one writes its parent's first.
 */
export class AppendBuffer {
  readonly #events: Pending<EventRow>[] = [];
  readonly #audit: Pending<AuditRow>[] = [];

  constructor(
    private readonly trx: KernelTransaction,
    private readonly log: AppendLog | undefined,
  ) {}

  /** Buffers an event row; `record.seq` is set when the row is written. */
  event(row: EventRow, record: Sequenced): void {
    this.#events.push({ row, record });
  }

  /** Buffers an audit row; `record.seq` is set when the row is written. */
  audit(row: AuditRow, record: Sequenced): void {
    this.#audit.push({ row, record });
  }

  /** Forgets the pending rows (their savepoint or transaction rolled back). */
  drop(): void {
    this.#events.length = 0;
    this.#audit.length = 0;
  }

  /** Writes the pending rows, in emission order: at most one statement per table (SQLite chunks very large ones). */
  async flush(): Promise<void> {
    const events = this.#events.splice(0);
    const audit = this.#audit.splice(0);
    if (events.length > 0) this.#sequence(events, await this.#write('events', events));
    if (audit.length > 0) this.#sequence(audit, await this.#write('audit_records', audit));
  }

  #sequence(rows: readonly Pending<unknown>[], seqs: readonly number[]): void {
    for (let i = 0; i < rows.length; i++) rows[i]!.record.seq = seqs[i]!;
  }

  async #write(table: 'events', rows: readonly Pending<EventRow>[]): Promise<number[]>;
  async #write(table: 'audit_records', rows: readonly Pending<AuditRow>[]): Promise<number[]>;
  async #write(table: 'events' | 'audit_records', rows: readonly Pending<EventRow | AuditRow>[]): Promise<number[]> {
    const values = rows.map((p) => p.row);
    if (this.log) return table === 'events' ? this.log.events(values as EventRow[]) : this.log.audit(values as AuditRow[]);
    // kysely (PostgreSQL): `returning` names each row's id, so no order of the returned rows is assumed.
    const seqOf = new Map<string, number>();
    for (let at = 0; at < values.length; at += PG_ROWS_PER_INSERT) {
      const chunk = values.slice(at, at + PG_ROWS_PER_INSERT);
      const insert = table === 'events' ? this.#insertEvents(chunk as EventRow[]) : this.#insertAudit(chunk as AuditRow[]);
      for (const r of await insert.execute()) seqOf.set(r.id, Number(r.seq));
    }
    return values.map((r) => seqOf.get(r.id)!);
  }

  #insertEvents(rows: EventRow[]) {
    return this.trx.insertInto('events').values(rows).returning(['id', 'seq']);
  }

  #insertAudit(rows: AuditRow[]) {
    return this.trx.insertInto('audit_records').values(rows).returning(['id', 'seq']);
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
 * transaction reads its own rows as it did when each row was written at once.
 *
 * @example
 * declare const trx: KernelStore;
 * await flushAppends(trx);
 * const head = await trx.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
 */
export async function flushAppends(db: KernelStore): Promise<void> {
  const b = buffers.get(db);
  if (b && !b.empty) await b.flush();
}
