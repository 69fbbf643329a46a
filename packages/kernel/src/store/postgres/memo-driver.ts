import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, TransactionSettings } from 'kysely';
import { statementEffect, type StatementEffect } from '../statement-effect.js';
import type { TableMemo } from '../store-memo.js';
import { asPostgresFault } from './postgres-faults.js';
import { encodeParams } from './text-escapes.js';

type Compile = Parameters<NonNullable<Driver['savepoint']>>[2];

/** The query with its string parameters escaped (`text-escapes.ts`); the same object when none needed it. */
function escaped(query: CompiledQuery): CompiledQuery {
  const parameters = encodeParams(query.parameters);
  return parameters === query.parameters ? query : { ...query, parameters };
}

/** Distinct SQL texts whose effect is kept (kysely emits a small set; past this the oldest goes). */
const EFFECT_CACHE_SIZE = 512;

/**
 * A kysely driver around PostgreSQL's that tells the store memo of every write before it runs (as the SQLite adapter's
 * prepared statements do: `statement-effect.ts` decides the table, or "all" for ROLLBACK and DDL) and turns store
 * faults into their LibosError (`postgres-faults.ts`). `assertLease` runs before a connection is handed out and before
 * a COMMIT, so a store whose writer lease was lost starts and commits no unit of work (it throws the loss). Everything
 * else is the wrapped driver's.
 *
 * @example
 * import { PostgresDialect } from 'kysely';
 * import type { TableMemo } from '../store-memo.js';
 * declare const memo: TableMemo;
 * class Dialect extends PostgresDialect {
 *   override createDriver() {
 *     return new MemoDriver(super.createDriver(), memo, 'postgres://db/libos?schema=s');
 *   }
 * }
 */
export class MemoDriver implements Driver {
  readonly #inner: Driver;
  readonly #memo: TableMemo;
  readonly #location: string;
  readonly #assertLease: () => void;
  readonly #effects = new Map<string, StatementEffect>();
  readonly #wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(inner: Driver, memo: TableMemo, location: string, assertLease: () => void = () => undefined) {
    this.#inner = inner;
    this.#memo = memo;
    this.#location = location;
    this.#assertLease = assertLease;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.#assertLease();
    const inner = await this.#inner.acquireConnection();
    const outer = this.#wrap(inner);
    this.#wrapped.set(outer, inner);
    return outer;
  }

  // Transaction statements run on the connection `pg` gave (kysely's driver marks it for discard on a failed ROLLBACK);
  // ROLLBACK and ROLLBACK TO undo writes the memo may have read since, so they drop every entry first.
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#faultless(() => this.#inner.beginTransaction(this.#unwrap(connection), settings));
  }

  // A lease lost mid-unit fails the COMMIT; the caller's ROLLBACK then undoes the unit.
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.#assertLease();
    return this.#faultless(() => this.#inner.commitTransaction(this.#unwrap(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.#memo.wroteAll();
    return this.#faultless(() => this.#inner.rollbackTransaction(this.#unwrap(connection)));
  }

  savepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    return this.#faultless(() => this.#inner.savepoint!(this.#unwrap(connection), name, compile));
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    this.#memo.wroteAll();
    return this.#faultless(() => this.#inner.rollbackToSavepoint!(this.#unwrap(connection), name, compile));
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    return this.#faultless(() => this.#inner.releaseSavepoint!(this.#unwrap(connection), name, compile));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#inner.releaseConnection(this.#unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }

  #unwrap(connection: DatabaseConnection): DatabaseConnection {
    return this.#wrapped.get(connection) ?? connection;
  }

  async #faultless(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      throw asPostgresFault(err, this.#location);
    }
  }

  /**
   * The connection kysely sees: every statement tells the memo first, its string parameters are escaped where
   * PostgreSQL could not hold them (`text-escapes.ts`; `row-types.ts` unescapes what is read), and a store fault
   * surfaces as its code.
   */
  #wrap(inner: DatabaseConnection): DatabaseConnection {
    const notice = (sql: string) => this.#notice(sql);
    const location = this.#location;
    return {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        notice(query.sql);
        try {
          return await inner.executeQuery<R>(escaped(query));
        } catch (err) {
          throw asPostgresFault(err, location);
        }
      },
      async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
        notice(query.sql);
        try {
          yield* inner.streamQuery<R>(escaped(query), chunkSize);
        } catch (err) {
          throw asPostgresFault(err, location);
        }
      },
    };
  }

  #notice(sql: string): void {
    let effect = this.#effects.get(sql);
    if (!effect) {
      effect = statementEffect(sql);
      if (this.#effects.size >= EFFECT_CACHE_SIZE) this.#effects.delete(this.#effects.keys().next().value!);
      this.#effects.set(sql, effect);
    }
    if (effect.kind === 'table') this.#memo.wrote(effect.table);
    else if (effect.kind === 'all') this.#memo.wroteAll();
  }
}
