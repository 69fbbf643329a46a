import { CompiledQuery, type DatabaseConnection } from 'kysely';
import { highestPlaceholder, inlineParameters, literalsOf } from './inline-parameters.js';
import { sqlState } from './postgres-faults.js';
import { planChangedShape, PREPARED_LIMIT } from './prepared-names.js';

/** SQLSTATE of a PREPARE whose name is taken on the session. */
const DUPLICATE_PREPARED = '42P05';

/** A text being prepared: its parameter count and the name it gets. */
interface Preparing {
  readonly sql: string;
  readonly parameters: number;
  readonly name: string;
}

/** PREPAREs `texts` on `connection`, one query (several statements by the simple protocol). */
const prepare = (connection: DatabaseConnection, texts: readonly Preparing[]) =>
  connection.executeQuery(CompiledQuery.raw(texts.map((p) => `prepare ${p.name} as ${p.sql}`).join('; ')));

/** A server's answer to a statement it refused (a `pg` error response carries a severity); not a lost connection. */
const refusedByServer = (err: unknown): boolean => typeof (err as { severity?: unknown } | null)?.severity === 'string';

/**
 * The statements one connection sends with parameters inside a query of several statements (the deferred round
 * trips of `deferred-control.ts`), prepared on the server by SQL `PREPARE` (K-15.29). The simple protocol such a
 * query goes by has the server parse and plan every statement in it each time: about a third of the server's time
 * for a checked call's one round trip (the guarded budget update, the events and audit rows, the COMMIT's flush).
 * A text prepared here goes as `execute <name>(<literals>)`: the literals are the ones `inlineParameters` would have
 * written, and PostgreSQL gives each the type it gave `$n` when it prepared the text, as it would resolve the
 * literal in place.
 *
 * A text is rendered inline the first time, and wanted; the wanted texts are prepared together (`prepareWanted`, one
 * round trip) when no transaction of the connection is open on the server, so a refusal (a text PostgreSQL cannot
 * prepare) aborts nothing: that text then always goes inline. Prepared statements outlive transactions, so what a
 * ROLLBACK undoes does not matter here; they end with the connection, and so does this object (one per `pg`
 * client). At most `limit` texts are prepared; past that new texts go inline. Names are `libos_rt_<n>`, apart from
 * K-15.24's.
 *
 * @example
 * declare const connection: DatabaseConnection;
 * const plans = new RoundTripPlans();
 * plans.render('update "t" set "a" = $1', [1]); // `update "t" set "a" = '1'` (inline; now wanted)
 * await plans.prepareWanted(connection); // prepare libos_rt_0 as update "t" set "a" = $1
 * plans.render('update "t" set "a" = $1', [2]); // `execute libos_rt_0('2')`
 */
export class RoundTripPlans {
  /** Texts by what they go as: a name once prepared, null when the server refused to prepare them. */
  readonly #names = new Map<string, string | null>();
  /** Texts to prepare, with the number of parameters they were rendered with. */
  readonly #wanted = new Map<string, number>();
  #next = 0;

  constructor(readonly limit = PREPARED_LIMIT) {}

  /** `sql` with `parameters` as one statement of a simple-protocol query; undefined when it cannot be written so. */
  render(sql: string, parameters: readonly unknown[]): string | undefined {
    const name = parameters.length === 0 ? undefined : this.#names.get(sql);
    if (name) {
      const literals = literalsOf(parameters);
      return literals && `execute ${name}(${literals.join(', ')})`;
    }
    const text = inlineParameters(sql, parameters);
    if (text !== undefined && name === undefined && parameters.length > 0 && this.#names.size + this.#wanted.size < this.limit) {
      this.#wanted.set(sql, parameters.length);
    }
    return text;
  }

  /** True while texts wait to be prepared. */
  get wanting(): boolean {
    return this.#wanted.size > 0;
  }

  /**
   * Prepares the wanted texts on `connection`, all in one query. Only while no transaction of it is open on the server
   * (a refused PREPARE would abort one). A text whose placeholders do not match the parameters it was rendered with,
   * or that the server refuses, goes inline from then on; a failure that is no refusal (the connection lost) is
   * thrown, the texts not prepared still wanted.
   */
  async prepareWanted(connection: DatabaseConnection): Promise<void> {
    const batch: Preparing[] = [];
    for (const [sql, parameters] of this.#wanted) {
      // `execute` must pass exactly the parameters the server counts in the text
      if (highestPlaceholder(sql) === parameters) batch.push({ sql, parameters, name: `libos_rt_${this.#next++}` });
      else this.#names.set(sql, null);
    }
    this.#wanted.clear();
    if (batch.length === 0) return;
    try {
      await prepare(connection, batch);
      for (const p of batch) this.#names.set(p.sql, p.name);
      return;
    } catch (err) {
      this.#stillWanted(batch, err);
      if (batch.length === 1) return void this.#names.set(batch[0]!.sql, null);
    }
    // One text was refused: those before it in the query are prepared (PREPARE outlives the failed query), those
    // after it are not. Each again on its own: one prepared already answers 42P05 (duplicate_prepared_statement).
    for (const [i, p] of batch.entries()) {
      try {
        await prepare(connection, [p]);
        this.#names.set(p.sql, p.name);
      } catch (err) {
        if (sqlState(err) === DUPLICATE_PREPARED) this.#names.set(p.sql, p.name);
        else if (refusedByServer(err)) this.#names.set(p.sql, null);
        else this.#stillWanted(batch.slice(i), err);
      }
    }
  }

  /** Rethrows `err` unless the server refused a text: the texts of `left` are then wanted again. */
  #stillWanted(left: readonly Preparing[], err: unknown): void {
    if (refusedByServer(err)) return;
    for (const p of left) this.#wanted.set(p.sql, p.parameters);
    throw err;
  }

  /**
   * After a round trip failed with `err`: a prepared plan the server refused because a table changed shape (a newer
   * libOS migrated the store under this host) forgets every name, so each text is prepared anew under a fresh one.
   */
  failed(err: unknown): void {
    if (planChangedShape(err)) {
      for (const [sql, name] of this.#names) if (name !== null) this.#names.delete(sql);
    }
  }
}
