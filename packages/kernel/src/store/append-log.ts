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
 * inside the transaction open on the store's connection. Each returns the row's `seq`. Every call writes several
 * events and audit rows, so these are the hot path's most frequent writes; a store without an append log is written
 * through kysely instead (`transaction.ts`).
 */
export interface AppendLog {
  event(row: EventRow): number;
  audit(row: AuditRow): number;
}
