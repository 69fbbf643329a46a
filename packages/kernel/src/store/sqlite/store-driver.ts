import type Database from 'better-sqlite3';
import {
  SelectQueryNode,
  SqliteDriver,
  type CompiledQuery,
  type DatabaseConnection,
  type QueryResult,
  type SqliteDialectConfig,
} from 'kysely';
import { ConnectionLock } from './connection-lock.js';
import type { DeferredSavepoints } from './deferred-savepoints.js';
import type { GroupCommit } from './group-commit.js';
import { asStoreFault } from './store-faults.js';

/** What kysely uses of a prepared statement. */
export interface StoreStatement {
  readonly reader: boolean;
  all(parameters: readonly unknown[]): unknown[];
  run(parameters: readonly unknown[]): Database.RunResult;
  iterate(parameters: readonly unknown[]): IterableIterator<unknown>;
}

/** The store's prepared statements, by SQL text (`open-sqlite.ts`), and the file they run on. */
export interface StatementSource {
  prepare(sql: string): StoreStatement;
  close(): void;
}

/** A compiled query run on its prepared statement, with the result kysely's SQLite driver gives (K-9.22). */
export function runCompiled(stmt: StoreStatement, parameters: readonly unknown[]): QueryResult<unknown> {
  if (stmt.reader) return { rows: stmt.all(parameters) };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** The store's one connection, as kysely sees it: what kysely's own SQLite connection does, on the statement cache. */
class StoreConnection implements DatabaseConnection {
  readonly #statements: StatementSource;

  constructor(statements: StatementSource) {
    this.#statements = statements;
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return Promise.resolve(runCompiled(this.#statements.prepare(compiled.sql), compiled.parameters) as QueryResult<R>);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error('Sqlite driver only supports streaming of select queries');
    for (const row of this.#statements.prepare(compiled.sql).iterate(compiled.parameters)) yield { rows: [row as R] };
  }
}

/**
 * The SQLite store's kysely driver: transactions are units of work under group commit (`group-commit.ts`), so BEGIN,
 * COMMIT and ROLLBACK go to the store's `GroupCommit`, and closing commits the open batch first. Before group commit
 * starts (migrations, recovery) they are plain. Its one connection is guarded by a `ConnectionLock` of its own
 * (K-9.25) instead of kysely's mutex, so a unit can begin on it at once (`tryBeginUnit`) while kysely's queries and
 * transactions on the root handle still wait their turn through `acquireConnection`. Savepoints are kysely's.
 *
 * @example
 * declare const driver: StoreDriver;
 * const connection = driver.tryBeginUnit(); // null while a unit or a root query holds the connection
 * if (connection) { await driver.commitTransaction(); driver.release(); }
 */
export class StoreDriver extends SqliteDriver {
  readonly #lock = new ConnectionLock();
  readonly #connection: StoreConnection;
  readonly #statements: StatementSource;
  readonly #group: GroupCommit;
  readonly #savepoints: DeferredSavepoints;
  readonly #location: string;
  #destroyed = false;

  constructor(
    config: SqliteDialectConfig,
    statements: StatementSource,
    group: GroupCommit,
    savepoints: DeferredSavepoints,
    location: string,
  ) {
    super(config);
    this.#statements = statements;
    this.#connection = new StoreConnection(statements);
    this.#group = group;
    this.#savepoints = savepoints;
    this.#location = location;
  }

  /** The connection exists from the start: nothing to set up. */
  override async init(): Promise<void> {}

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.acquire();
    return this.#connection;
  }

  override async releaseConnection(): Promise<void> {
    this.#lock.release();
  }

  /**
   * Takes the connection if it is free and begins a unit on it (K-9.25): the connection, held until `release`, or
   * null when someone holds or waits for it (or the store is closed): the caller then begins through kysely.
   */
  tryBeginUnit(): DatabaseConnection | null {
    if (!this.tryHold()) return null;
    try {
      this.#begin();
    } catch (err) {
      this.#lock.release();
      throw err;
    }
    return this.#connection;
  }

  /** Takes the connection if it is free (for one query run at once, K-9.32): false when held or waited for, or closed. */
  tryHold(): boolean {
    return !this.#destroyed && this.#lock.tryAcquire();
  }

  /** Releases the connection a unit begun with `tryBeginUnit` (or a `tryHold`) held. */
  release(): void {
    this.#lock.release();
  }

  override async beginTransaction(): Promise<void> {
    this.#begin();
  }

  // The unit's own savepoint is one of `savepoints` (K-9.19): they are forgotten once the unit has ended it.
  override async commitTransaction(): Promise<void> {
    try {
      this.#faultless(() => this.#group.commit());
    } finally {
      this.#savepoints.reset();
    }
  }

  override async rollbackTransaction(): Promise<void> {
    try {
      this.#faultless(() => this.#group.rollback());
    } finally {
      this.#savepoints.reset();
    }
  }

  /** Commits the open batch and closes the file; once (kysely destroys a driver only if it ever used it). */
  override async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    try {
      this.#group.close();
    } finally {
      this.#statements.close();
    }
  }

  #begin(): void {
    this.#savepoints.reset();
    this.#faultless(() => this.#group.begin());
  }

  #faultless(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      throw asStoreFault(err, this.#location);
    }
  }
}
