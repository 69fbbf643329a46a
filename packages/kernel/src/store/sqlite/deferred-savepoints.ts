import { statementRole, type StatementRole } from './group-commit.js';

/** Statement texts whose role is kept (a unit opens savepoints `libos_sp_0` up; far fewer than this in practice). */
const ROLES_MOST = 1_000;

/**
 * The savepoints of a unit's inner transactions (`inSavepoint`), sent to SQLite only when a write needs them
 * (K-9.14). A savepoint nothing writes in has nothing to undo, so until a write runs it is only a name: its RELEASE
 * and its ROLLBACK TO are dropped unsent. Before a write, the deferred ones are opened, outermost first, so the write
 * lands in exactly the savepoints it would have without deferring. An agent step opened 26 savepoints, 11 of them
 * only read (the budget left, the flow labels, the process row): 22 of its 147 statements were their SAVEPOINT and
 * RELEASE, and each failed read-only one (a refused charge) cleared the store memo with its ROLLBACK TO. (PostgreSQL's
 * driver defers them too, to save round trips: `postgres/deferred-control.ts`.)
 *
 * @example
 * const ran: string[] = [];
 * const sp = new DeferredSavepoints((sql) => ran.push(sql));
 * sp.exec('savepoint a');
 * sp.exec('release a'); // ran: [] (nothing was written in it)
 * sp.exec('savepoint b');
 * sp.beforeWrite();     // ran: ['savepoint b']
 * sp.exec('release b'); // ran: ['savepoint b', 'release b']
 */
export class DeferredSavepoints {
  /** Savepoints opened but not sent, innermost last: always the innermost ones (sending sends them all). */
  readonly #pending: string[] = [];
  readonly #roles = new Map<string, StatementRole>();

  /**
   * `run` sends a statement; `inTransaction` says whether SQLite still has the transaction open (it ends one by itself
   * on some faults, e.g. an I/O error): ending a deferred savepoint after that is sent anyway, so SQLite reports the
   * lost transaction as it did for one that was sent.
   */
  constructor(
    private readonly run: (sql: string) => void,
    private readonly inTransaction: () => boolean = () => true,
  ) {}

  /** Runs, defers or drops one parameterless statement of `inSavepoint` (SAVEPOINT, RELEASE, ROLLBACK TO). */
  exec(sql: string): void {
    const role = this.#roleOf(sql);
    if (role.kind === 'savepoint') {
      this.#pending.push(role.name);
      return;
    }
    if (role.kind !== 'release' && role.kind !== 'rollback_to') {
      this.beforeWrite();
      this.run(sql);
      return;
    }
    // Ending a savepoint ends the deferred ones inside it; ROLLBACK TO keeps the savepoint itself open.
    const at = this.#pending.lastIndexOf(role.name);
    this.#pending.length = at === -1 ? 0 : role.kind === 'release' ? at : at + 1;
    if (at === -1 || !this.inTransaction()) this.run(sql);
  }

  /** A statement's role, parsed once per text (a unit's savepoints reuse a few names: `libos_sp_<n>`). */
  #roleOf(sql: string): StatementRole {
    let role = this.#roles.get(sql);
    if (role === undefined) {
      role = statementRole(sql);
      if (this.#roles.size < ROLES_MOST) this.#roles.set(sql, role);
    }
    return role;
  }

  /** A write is about to run: opens the deferred savepoints, outermost first. */
  beforeWrite(): void {
    while (this.#pending.length > 0) {
      this.run(`savepoint ${this.#pending[0]!}`);
      this.#pending.shift();
    }
  }

  /** A unit began or ended: no savepoint of it is left to open. */
  reset(): void {
    this.#pending.length = 0;
  }

  /** How many savepoints wait for a write (for tests). */
  get deferred(): number {
    return this.#pending.length;
  }
}
