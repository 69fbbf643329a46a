/** Statement texts a pool names at most; a text met after that runs unnamed (parsed and planned each time, as before). */
export const PREPARED_LIMIT = 1000;

/** What PostgreSQL says when a prepared statement's table changed shape since it was prepared (SQLSTATE 0A000). */
const RESULT_TYPE_CHANGED = /cached plan must not change result type/;

/**
 * Whether `err` is PostgreSQL's own failure of a prepared `select *` (or `returning *`) whose table changed shape since
 * it was prepared (a newer libOS migrated the store under a running host): SQLSTATE 0A000 with that message.
 *
 * @example
 * planChangedShape(Object.assign(new Error('cached plan must not change result type'), { code: '0A000' })); // true
 */
export const planChangedShape = (err: unknown): boolean =>
  err instanceof Error && (err as { code?: unknown }).code === '0A000' && RESULT_TYPE_CHANGED.test(err.message);

/**
 * The names under which a pool's connections prepare the statements they run with parameters (K-15.24): one name per
 * statement text, shared by every connection of the pool, so each connection has the server parse and plan a text
 * once and then only binds and executes it (`pg` sends the Parse only the first time a connection uses a name). A
 * statement without parameters is not named: it goes by the simple protocol (several statements in one round trip,
 * `deferred-control.ts`).
 *
 * @example
 * const names = new PreparedNames();
 * names.of('select * from "processes" where "pid" = $1', 1); // 'libos_0'
 * names.of('select 1', 0); // undefined: no parameters, runs unnamed
 */
export class PreparedNames {
  readonly #names = new Map<string, string>();
  #next = 0;

  constructor(readonly limit = PREPARED_LIMIT) {}

  /** The name `text` is prepared under, or undefined when it runs unnamed (no parameters, or the limit is reached). */
  of(text: string, parameters: number): string | undefined {
    if (parameters === 0) return undefined;
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < this.limit) this.#names.set(text, (name = `libos_${this.#next++}`));
    return name;
  }

  /**
   * After `err` failed the statement `text`: when the server refused its prepared plan because a table changed shape,
   * the text gets a fresh name, so the next run prepares it anew (on every connection); true when that happened.
   */
  failed(text: string, err: unknown): boolean {
    if (!planChangedShape(err)) return false;
    return this.#names.delete(text);
  }
}
