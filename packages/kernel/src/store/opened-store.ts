import type { StoreDialect } from '@libos/sdk';
import type { AppendLog } from './append-log.js';
import type { KernelStore } from './kernel-database.js';
import type { SessionQuery } from './postgres/tree-leases.js';
import type { TableMemo } from './store-memo.js';

/** A shared store's per-host session (`OpenedStore.shared`). */
export interface SharedStoreSession {
  readonly session: SessionQuery;
  /** Lets the next host open: called once this host has migrated and recovered. */
  endOpen(): Promise<void>;
}

/**
 * The store contract `openRuntime` runs on: what a store adapter (`sqlite/open-sqlite.ts`, `postgres/open-postgres.ts`)
 * hands the kernel once it holds the store's writer lease. Everything dialect-specific stays behind it; the rest of
 * the kernel speaks kysely only.
 *
 * @example
 * import { migrate, migrationKit, type MigrationSet } from '@libos/kernel';
 * declare const store: OpenedStore, sets: MigrationSet[];
 * await migrate(store.db, sets, () => new Date().toISOString(), store.location, migrationKit(store.dialect));
 */
export interface OpenedStore {
  /** Which SQL the store speaks: picks the migration kit. */
  readonly dialect: StoreDialect;
  readonly db: KernelStore;
  /** The append-only tables' inserts by the adapter's fastest means; without one they go through kysely. */
  readonly appendLog?: AppendLog;
  /** The read cache every write on this store keeps honest (`store-memo.ts`). */
  readonly memo: TableMemo;
  /** Runs one parameterless statement (SAVEPOINT, RELEASE, ROLLBACK TO) synchronously; without it, through kysely. */
  readonly exec?: (sql: string) => void;
  /**
   * Present when the store is shared by many runtime hosts (PostgreSQL, `openRuntime({ host })`): the host's own
   * session (roster, heartbeats, lease renewal) and the end of its open phase. The memo is then not bound.
   */
  readonly shared?: SharedStoreSession;
  /**
   * True when the store defers guarded writes (`runGuarded`) to the unit's next round trip (PostgreSQL, K-15.23): a
   * call then sends them before a tool that acts outside the store (`sendDeferredWrites`). Absent: a guarded write
   * is checked when it runs.
   */
  readonly defersGuards?: boolean;
  /** Canonical file path, ':memory:', or the URL without its password. */
  readonly location: string;
  /**
   * Starts group commit (`sqlite/group-commit.ts`, K-9.7) once the store is migrated and recovered: units of work then
   * commit through the redo log and reach SQLite in batches. A no-op for ':memory:' and on PostgreSQL.
   */
  startGroupCommit(): void;
  /** Commits the current batch of units now (tests and hosts that hand the store to another reader); a no-op without group commit. */
  flush(): void;
  close(): Promise<void>;
}
