import { CompiledQuery, type DatabaseConnection, type QueryResult } from 'kysely';
import { inlineParameters } from './inline-parameters.js';

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
export class DeferredControl {
  #pending: string[] = [];

  /** BEGIN, deferred. */
  begin(): void {
    this.#pending = ['begin'];
  }

  /**
   * Takes `sql` when it need not run now: a SAVEPOINT (deferred), a RELEASE (never sent: the COMMIT ends every
   * savepoint), a ROLLBACK TO a savepoint not sent yet (nothing ran since: nothing to undo). False for anything else,
   * a ROLLBACK TO a sent savepoint included (the savepoints pending inside it are dropped: it undoes them).
   */
  take(sql: string): boolean {
    const m = CONTROL.exec(sql);
    if (!m) return false;
    const verb = m[1]!.toLowerCase();
    const key = `savepoint ${m[3]}`;
    if (verb === 'savepoint') {
      this.#pending.push(key);
      return true;
    }
    const at = this.#pending.indexOf(key);
    if (at >= 0) this.#pending.length = at;
    if (verb === 'release' || at >= 0) return true;
    this.#pending.length = 0;
    return false;
  }

  /**
   * Runs `query` on `connection`, what is pending first: in one round trip when its parameters can be inlined (the
   * connection must answer a query of several statements with the last one's result: `lastResultPool`), else in two.
   */
  async run<R>(connection: DatabaseConnection, query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#pending.length > 0) {
      const sql = inlineParameters(query.sql, query.parameters);
      if (sql !== undefined) return connection.executeQuery<R>(CompiledQuery.raw(`${this.#takePending()}; ${sql}`));
      await this.send(connection);
    }
    return connection.executeQuery<R>(query);
  }

  /** Sends what is pending, as one query (simple protocol: no parameters), before a statement that must run. */
  async send(connection: DatabaseConnection): Promise<void> {
    if (this.#pending.length === 0) return;
    await connection.executeQuery(CompiledQuery.raw(this.#takePending()));
  }

  /** What is pending as one text, no longer pending. */
  #takePending(): string {
    const text = this.#pending.join('; ');
    this.#pending = [];
    return text;
  }

  /** The transaction ends: true when its BEGIN never went to the server (nothing ran, so nothing to end there). */
  end(): boolean {
    const unsent = this.#pending[0] === 'begin';
    this.#pending = [];
    return unsent;
  }
}
