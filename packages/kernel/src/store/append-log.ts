/** One row of `events`, as written. */
export interface EventRow {
  readonly id: string;
  readonly ts: string;
  readonly pid: string | null;
  readonly type: string;
  /** JSON text. */
  readonly data: string;
}

/** One row of `audit_records`, as written. */
export interface AuditRow {
  readonly id: string;
  readonly ts: string;
  readonly actor: string;
  readonly action: string;
  readonly target: string | null;
  readonly decision: string | null;
  readonly call_id: string | null;
  /** JSON text. */
  readonly details: string;
}

/**
 * The store's two append-only tables, written by a store adapter's fastest means (prepared statements on SQLite),
 * inside the transaction open on the store's connection. Each takes the rows a savepoint or transaction emitted
 * (`append-buffer.ts`: written together when it ends well), writes them in order in as few statements as it can and
 * returns their `seq`s in the same order. A store without an append log is written through kysely instead.
 */
export interface AppendLog {
  events(rows: readonly EventRow[]): number[];
  audit(rows: readonly AuditRow[]): number[];
}
