import type { WriteGuard } from '@libos/sdk';
import { CompiledQuery, type DatabaseConnection, type QueryResult } from 'kysely';
import { deferredMiss } from '../deferred-writes.js';
import { inlineParameters } from './inline-parameters.js';
import type { RoundTripPlans } from './round-trip-plans.js';

/** The text a failed guard makes PostgreSQL quote in its error (an integer cast of it fails): `libos_guard:<n>:`. */
const GUARD_FAILED = /libos_guard:(\d+):/;

/**
 * `write` (an UPDATE or DELETE without RETURNING, its parameters inlined) as one statement that fails unless it
 * changed exactly `rows` rows: the cast of a text that depends on the row count cannot be folded when planned, so it
 * runs, and fails, only on a miss.
 */
const guardStatement = (write: string, rows: number, n: number): string =>
  `with w as (${write} returning 1) select case when (select count(*) from w) = ${rows} then 0 ` +
  `else ('libos_guard:${n}:' || (select count(*) from w))::int end`;

const CONTROL = /^\s*(savepoint|release|rollback\s+to)\s+(?:savepoint\s+)?("?)(\w+)\2\s*;?\s*$/i;

/**
 * The transaction-control statements of one connection that have not gone to the server: a BEGIN and the SAVEPOINTs
 * after it, in order. They go in the same round trip as the next statement that must run (`run`: one simple query,
 * its parameters inlined as literals, K-15.20), or on their own just before it when it cannot be inlined (`send`); a
 * savepoint released or rolled back to before that is dropped unsent, and a transaction that ends with its BEGIN
 * unsent sends nothing at all (`end`).
 *
 * @example
 * const c = new DeferredControl();
 * c.begin();
 * c.take('savepoint libos_sp_0'); // true: deferred
 * c.take('release libos_sp_0'); // true: dropped, never sent
 * c.end(); // true: nothing went to the server, so COMMIT needs no round trip either
 */
/** A statement held back for the next round trip; `guard` marks a deferred guarded write. */
interface Pending {
  readonly sql: string;
  readonly guard?: true;
}

const BEGIN: Pending = { sql: 'begin' };

export class DeferredControl {
  readonly #plans: RoundTripPlans | undefined;
  #pending: Pending[] = [];
  #committed = false;
  #open = false;
  /** Guarded writes deferred in this transaction, by number: the error each fails it with (`WriteGuard`). */
  #guards = new Map<number, WriteGuard>();

  /**
   * With `plans` (the connection's, K-15.29), a statement with parameters that rides with others goes as `execute`
   * of its prepared text once prepared; without, inlined (K-15.20).
   */
  constructor(plans?: RoundTripPlans) {
    this.#plans = plans;
  }

  /** BEGIN, deferred. */
  begin(): void {
    this.#pending = [BEGIN];
    this.#committed = false;
    this.#open = true;
    this.#guards.clear();
  }

  /**
   * Takes a guarded write (`runGuarded`) to go with the transaction's next round trip, checked there: true when it
   * did (a transaction is open and `query`'s parameters can be inlined), and the write then counts as done as
   * guarded; false when it must run now, as any statement.
   */
  defer(query: CompiledQuery, guard: WriteGuard): boolean {
    if (!this.#open || this.#committed || /\breturning\b/i.test(query.sql)) return false;
    const n = this.#guards.size;
    const sql = this.#render(guardStatement(query.sql, guard.rows, n), query.parameters);
    if (sql === undefined) return false;
    this.#guards.set(n, guard);
    this.#pending.push({ sql, guard: true });
    return true;
  }

  /** True while a deferred guarded write has not gone to the server: the COMMIT must carry it (`commit`). */
  get guarding(): boolean {
    return this.#pending.some((p) => p.guard === true);
  }

  /**
   * Takes `sql` when it need not run now: a SAVEPOINT (deferred), a RELEASE (never sent: the COMMIT ends every
   * savepoint), a ROLLBACK TO a savepoint not sent yet (nothing ran since but deferred guarded writes: it undoes
   * them). False for anything else, a ROLLBACK TO a sent savepoint included (the savepoints pending inside it are
   * dropped: it undoes them). A RELEASE drops the savepoints pending from the released one on and keeps the guarded
   * writes deferred inside them: released, they belong to the enclosing savepoint, and still go to the server.
   */
  take(sql: string): boolean {
    const m = CONTROL.exec(sql);
    if (!m) return false;
    if (this.#committed) return true; // after the COMMIT went (K-15.21) reads run on their own: no savepoint to keep
    const verb = m[1]!.toLowerCase();
    const key = `savepoint ${m[3]}`;
    if (verb === 'savepoint') {
      this.#pending.push({ sql: key });
      return true;
    }
    const at = this.#pending.findIndex((p) => p.sql === key);
    if (verb === 'release') {
      if (at >= 0) this.#pending = this.#pending.filter((p, i) => i < at || p.guard === true);
      return true;
    }
    if (at >= 0) {
      this.#pending.length = at;
      return true;
    }
    this.#pending.length = 0;
    return false;
  }

  /**
   * Runs `query` on `connection`, what is pending first: in one round trip when its parameters can be inlined (the
   * connection must answer a query of several statements with the last result that is not transaction control:
   * `lastResultPool`), else in two. With `commit`, a COMMIT follows it in the same round trip when it could be inlined
   * (K-15.21; `end` then sends nothing); else the COMMIT is left to the caller as usual.
   */
  async run<R>(connection: DatabaseConnection, query: CompiledQuery, commit = false): Promise<QueryResult<R>> {
    if (this.#pending.length > 0 || commit) {
      await this.#prepareWanted(connection);
      const sql = this.#render(query.sql, query.parameters);
      if (sql !== undefined) {
        const text = [...this.#takePending(), sql, ...(commit ? ['commit'] : [])].join('; ');
        const result = await this.#guarded(connection.executeQuery<R>(CompiledQuery.raw(text)));
        this.#committed = commit;
        return result;
      }
      await this.send(connection);
    }
    return connection.executeQuery<R>(query);
  }

  /** Sends what is pending, as one query (simple protocol: no parameters), before a statement that must run. */
  async send(connection: DatabaseConnection): Promise<void> {
    if (this.#pending.length === 0) return;
    await this.#prepareWanted(connection);
    await this.#guarded(connection.executeQuery(CompiledQuery.raw(this.#takePending().join('; '))));
  }

  /** Sends what is pending (a deferred guarded write among it) with the COMMIT, in one round trip; then `end`s. */
  async commit(connection: DatabaseConnection): Promise<void> {
    await this.#prepareWanted(connection);
    await this.#guarded(connection.executeQuery(CompiledQuery.raw([...this.#takePending(), 'commit'].join('; '))));
    this.end();
  }

  /** `sql` with `parameters` as one statement of a query of several (K-15.29 with plans, else K-15.20). */
  #render(sql: string, parameters: readonly unknown[]): string | undefined {
    return this.#plans ? this.#plans.render(sql, parameters) : inlineParameters(sql, parameters);
  }

  /**
   * Prepares the texts the connection's plans want (K-15.29) while its BEGIN is still held back: no transaction of
   * it is open on the server then, so a PREPARE the server refuses aborts nothing.
   */
  async #prepareWanted(connection: DatabaseConnection): Promise<void> {
    if (this.#plans?.wanting && this.#pending[0] === BEGIN) await this.#plans.prepareWanted(connection);
  }

  /** `trip`'s result, or the error of the guarded write whose miss failed it (a PostgreSQL error naming its guard). */
  async #guarded<T>(trip: Promise<T>): Promise<T> {
    try {
      return await trip;
    } catch (err) {
      this.#plans?.failed(err);
      const m = this.#guards.size > 0 ? GUARD_FAILED.exec(err instanceof Error ? err.message : '') : null;
      const guard = m ? this.#guards.get(Number(m[1])) : undefined;
      throw guard ? deferredMiss(guard.error()) : err;
    }
  }

  /** The texts of what is pending, no longer pending. */
  #takePending(): string[] {
    const pending = this.#pending.map((p) => p.sql);
    this.#pending = [];
    return pending;
  }

  /** True when the transaction's COMMIT already went with its last statement (`run` with `commit`). */
  get committed(): boolean {
    return this.#committed;
  }

  /**
   * The transaction ends: true when nothing need go to the server for it, because its BEGIN never went (nothing ran)
   * or its COMMIT already did.
   */
  end(): boolean {
    const done = this.#pending[0] === BEGIN || this.#committed;
    this.#pending = [];
    this.#committed = false;
    this.#open = false;
    this.#guards.clear();
    return done;
  }
}
