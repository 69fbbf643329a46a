import { LibosError, writeGuardOf } from '@libos/sdk';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, TransactionSettings } from 'kysely';
import { ridesCommit } from '../commit-ride.js';
import { sendsDeferred } from '../deferred-writes.js';
import { statementEffect, type StatementEffect } from '../statement-effect.js';
import type { TableMemo } from '../store-memo.js';
import { DeferredControl } from './deferred-control.js';
import { asPostgresFault } from './postgres-faults.js';
import { RoundTripPlans } from './round-trip-plans.js';
import { encodeParams } from './text-escapes.js';

type Compile = Parameters<NonNullable<Driver['savepoint']>>[2];

/** The query with its string parameters escaped (`text-escapes.ts`); the same object when none needed it. */
function escaped(query: CompiledQuery): CompiledQuery {
  const parameters = encodeParams(query.parameters);
  return parameters === query.parameters ? query : { ...query, parameters };
}

/**
 * A unit that promised its last savepoint was its last write (`UnitOfWork.endsAfterLast`) wrote after it, when its
 * COMMIT had gone already: the write would run outside the unit, so it is refused (a kernel defect, never a user's).
 */
const writeAfterCommit = (sql: string) =>
  new LibosError('internal_error', `a unit of work wrote after its COMMIT went with its last savepoint (K-15.21): ${sql.slice(0, 120)}`);

/** Distinct SQL texts whose effect is kept (kysely emits a small set; past this the oldest goes). */
const EFFECT_CACHE_SIZE = 512;

/**
 * A kysely driver around PostgreSQL's that tells the store memo of every write before it runs (as the SQLite adapter's
 * prepared statements do: `statement-effect.ts` decides the table, or "all" for ROLLBACK and DDL) and turns store
 * faults into their LibosError (`postgres-faults.ts`). `assertLease` runs before a connection is handed out and before
 * a COMMIT, so a store whose writer lease was lost starts and commits no unit of work (it throws the loss).
 *
 * BEGIN and SAVEPOINT are deferred (`DeferredControl`): they go to the server in one round trip with the next
 * statement that is not one of them (its parameters inlined, K-15.20; or as `execute` of its text, prepared once on
 * the connection, K-15.29), or just before it, and a savepoint that ends before any statement ran in it is never
 * sent. RELEASE is never sent (the COMMIT ends every savepoint; a ROLLBACK TO an enclosing one undoes it with the
 * rest). A transaction's last statement marked by `withCommit` carries the COMMIT in its round trip (K-15.21), and
 * `commitTransaction` then sends nothing. A guarded write (`runGuarded`) in a transaction is deferred too, as a
 * statement that fails the round trip it goes in when the write misses (K-15.23): a unit whose only eager statement
 * was a budget charge goes to the server once. Everything else is the wrapped driver's.
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
  readonly #controls = new WeakMap<DatabaseConnection, DeferredControl>();
  /** Per connection `pg` made (kysely keeps one object per client): the texts prepared on it (K-15.29). */
  readonly #plans = new WeakMap<DatabaseConnection, RoundTripPlans>();

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
    if (settings.isolationLevel === undefined && settings.accessMode === undefined) {
      this.#control(connection).begin();
      return Promise.resolve();
    }
    return this.#faultless(() => this.#inner.beginTransaction(this.#unwrap(connection), settings));
  }

  // A lease lost mid-unit fails the COMMIT; the caller's ROLLBACK then undoes the unit.
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = this.#control(connection);
    // Already committed with the last statement (K-15.21; the lease was asserted then): a loss now must not fail it.
    if (c.committed) return Promise.resolve(void c.end());
    this.#assertLease();
    if (c.guarding) return this.#faultless(() => c.commit(this.#unwrap(connection))); // a guarded write rides with it
    if (c.end()) return Promise.resolve(); // nothing ran: nothing to commit
    return this.#faultless(() => this.#inner.commitTransaction(this.#unwrap(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.#memo.wroteAll();
    if (this.#control(connection).end()) return Promise.resolve();
    return this.#faultless(() => this.#inner.rollbackTransaction(this.#unwrap(connection)));
  }

  // kysely's own savepoint API defers like the raw statements `transaction.ts` runs (`#wrap`): never before its BEGIN.
  savepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    const c = this.#control(connection);
    if (c.take(`savepoint ${name}`)) return Promise.resolve();
    return this.#faultless(async () => {
      await c.send(this.#unwrap(connection));
      await this.#inner.savepoint!(this.#unwrap(connection), name, compile);
    });
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    this.#memo.wroteAll();
    const c = this.#control(connection);
    if (c.take(`rollback to ${name}`)) return Promise.resolve();
    return this.#faultless(async () => {
      await c.send(this.#unwrap(connection));
      await this.#inner.rollbackToSavepoint!(this.#unwrap(connection), name, compile);
    });
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    const c = this.#control(connection);
    if (c.take(`release ${name}`)) return Promise.resolve();
    return this.#faultless(async () => {
      await c.send(this.#unwrap(connection));
      await this.#inner.releaseSavepoint!(this.#unwrap(connection), name, compile);
    });
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#controls.delete(connection);
    return this.#inner.releaseConnection(this.#unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }

  #control(connection: DatabaseConnection): DeferredControl {
    let c = this.#controls.get(connection);
    if (!c) {
      const inner = this.#unwrap(connection);
      let plans = this.#plans.get(inner);
      if (!plans) this.#plans.set(inner, (plans = new RoundTripPlans()));
      this.#controls.set(connection, (c = new DeferredControl(plans)));
    }
    return c;
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
    const control = (outer: DatabaseConnection) => this.#control(outer);
    const assertLease = () => this.#assertLease();
    const outer: DatabaseConnection = {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        const c = control(outer);
        if (sendsDeferred(query)) {
          await c.send(inner).catch((err: unknown) => Promise.reject(asPostgresFault(err, location)));
          return { rows: [] };
        }
        if (query.parameters.length === 0 && c.take(query.sql)) {
          notice(query.sql); // a ROLLBACK TO held back may still undo a guarded write the memo was told of (K-15.23)
          return { rows: [] };
        }
        const commit = ridesCommit(query);
        if (commit) assertLease(); // the COMMIT may go now: checked as `commitTransaction` checks it
        if (notice(query.sql) !== 'none' && c.committed) throw writeAfterCommit(query.sql);
        const guard = writeGuardOf(query);
        if (guard && c.defer(escaped(query), guard)) return { rows: [], numAffectedRows: BigInt(guard.rows) };
        try {
          return await c.run<R>(inner, escaped(query), commit);
        } catch (err) {
          throw asPostgresFault(err, location);
        }
      },
      async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
        notice(query.sql);
        try {
          await control(outer).send(inner);
          yield* inner.streamQuery<R>(escaped(query), chunkSize);
        } catch (err) {
          throw asPostgresFault(err, location);
        }
      },
    };
    return outer;
  }

  /** Tells the memo what `sql` writes; answers the kind of its effect. */
  #notice(sql: string): StatementEffect['kind'] {
    let effect = this.#effects.get(sql);
    if (!effect) {
      effect = statementEffect(sql);
      if (this.#effects.size >= EFFECT_CACHE_SIZE) this.#effects.delete(this.#effects.keys().next().value!);
      this.#effects.set(sql, effect);
    }
    this.#memo.ran(effect);
    return effect.kind;
  }
}
