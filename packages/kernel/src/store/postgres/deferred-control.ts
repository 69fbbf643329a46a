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
  #committed = false;

  /** BEGIN, deferred. */
  begin(): void {
    this.#pending = ['begin'];
    this.#committed = false;
  }

  /**
   * Takes `sql` when it need not run now: a SAVEPOINT (deferred), a RELEASE (never sent: the COMMIT ends every
   * savepoint), a ROLLBACK TO a savepoint not sent yet (nothing ran since: nothing to undo). False for anything else,
   * a ROLLBACK TO a sent savepoint included (the savepoints pending inside it are dropped: it undoes them).
   */
  take(sql: string): boolean {
    const m = CONTROL.exec(sql);
    if (!m) return false;
    if (this.#committed) return true; // after the COMMIT went (K-15.21) reads run on their own: no savepoint to keep
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
   * connection must answer a query of several statements with the last result that is not transaction control:
   * `lastResultPool`), else in two. With `commit`, a COMMIT follows it in the same round trip when it could be inlined
   * (K-15.21; `end` then sends nothing); else the COMMIT is left to the caller as usual.
   */
  async run<R>(connection: DatabaseConnection, query: CompiledQuery, commit = false): Promise<QueryResult<R>> {
    if (this.#pending.length > 0 || commit) {
      const sql = inlineParameters(query.sql, query.parameters);
      if (sql !== undefined) {
        const text = [...this.#takePending(), sql, ...(commit ? ['commit'] : [])].join('; ');
        const result = await connection.executeQuery<R>(CompiledQuery.raw(text));
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
    await connection.executeQuery(CompiledQuery.raw(this.#takePending().join('; ')));
  }

  /** What is pending, no longer pending. */
  #takePending(): string[] {
    const pending = this.#pending;
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
    const done = this.#pending[0] === 'begin' || this.#committed;
    this.#pending = [];
    this.#committed = false;
    return done;
  }
}
