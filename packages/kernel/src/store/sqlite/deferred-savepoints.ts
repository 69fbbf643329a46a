import { statementRole, type StatementRole } from './group-commit.js';

/** Statement texts whose role is kept (a unit opens savepoints `libos_sp_0` up; far fewer than this in practice). */
const ROLES_MOST = 1_000;

/**
 * One open savepoint, innermost last: `pending` until a write needs it (K-9.14); `sent` when SQLite has it; or an
 * `alias` of the sent one at `of` (its index), opened when nothing had been written since that one began (K-9.19).
 */
type Entry =
  | { readonly name: string; readonly state: 'pending' | 'sent' }
  | { readonly name: string; readonly state: 'alias'; readonly of: number };

/**
 * The savepoints of a unit of work (the unit's own and its inner transactions', `inSavepoint`), sent to SQLite only
 * when a write needs them, and only as many as undoing needs.
 *
 * - **Deferred (K-9.14).** A savepoint nothing writes in has nothing to undo, so until a write runs it is only a name:
 *   its RELEASE and its ROLLBACK TO are dropped unsent. An agent step opened 26 savepoints, 11 of them only read (the
 *   budget left, the flow labels, the process row), and each failed read-only one (a refused charge) cleared the
 *   store memo with its ROLLBACK TO.
 * - **Shared (K-9.19).** Savepoints opened with no write between them mark the same state, so one SQLite savepoint
 *   serves them all: before a write, only the outermost pending one is sent (none, when the sent savepoint around
 *   them has had no write since it began), and the others become aliases of it. ROLLBACK TO an alias rolls back to
 *   the savepoint it shares (the same state); RELEASE of an alias sends nothing (its writes already belong to the
 *   savepoint around it). A call's unit opened its own savepoint and the call's, back to back: two SAVEPOINTs and two
 *   RELEASEs a call, now one of each.
 *
 * Either way every write lands in a savepoint that begins where its own would have begun, so a rollback undoes exactly
 * what it undid when each savepoint was sent. (PostgreSQL's driver defers them too, to save round trips:
 * `postgres/deferred-control.ts`.)
 *
 * @example
 * const ran: string[] = [];
 * const sp = new DeferredSavepoints((sql) => ran.push(sql));
 * sp.exec('savepoint a');
 * sp.exec('release a');  // ran: [] (nothing was written in it)
 * sp.exec('savepoint b');
 * sp.exec('savepoint c');
 * sp.beforeWrite();      // ran: ['savepoint b'] (c shares it: nothing was written between them)
 * sp.exec('release c');  // ran: ['savepoint b']
 * sp.exec('release b');  // ran: ['savepoint b', 'release b']
 */
export class DeferredSavepoints {
  /** The open savepoints, outermost first; the pending ones are always the innermost (sending sends them all). */
  readonly #open: Entry[] = [];
  /** Index of the first pending entry (`#open.length` when none is). */
  #firstPending = 0;
  /** Whether a write ran since the innermost sent savepoint began (or was rolled back to): then it cannot be shared. */
  #dirty = true;
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

  /** Runs, defers or drops one parameterless statement of a unit (SAVEPOINT, RELEASE, ROLLBACK TO). */
  exec(sql: string): void {
    const role = this.#roleOf(sql);
    if (role.kind === 'savepoint') {
      this.#open.push({ name: role.name, state: 'pending' });
      return;
    }
    if (role.kind !== 'release' && role.kind !== 'rollback_to') {
      this.beforeWrite();
      this.run(sql);
      return;
    }
    const at = this.#indexOf(role.name);
    if (at === -1 || !this.inTransaction()) {
      // Not one of the unit's, or SQLite lost the transaction: sent as it is, so SQLite does (or reports) what it says.
      this.#dirty = true;
      if (at !== -1) this.#forget(role.kind === 'release' ? at : at + 1);
      this.run(sql);
      return;
    }
    if (role.kind === 'release') this.#release(at);
    else this.#rollbackTo(at);
  }

  /** A write is about to run: the pending savepoints are opened, as one SQLite savepoint or as aliases of one. */
  beforeWrite(): void {
    const open = this.#open;
    let i = this.#firstPending;
    if (i < open.length) {
      // Shared with the sent savepoint around them when nothing was written in it since it began; else the outermost
      // pending one is sent and the others share it.
      // An alias names the sent savepoint it shares, so one step finds the sent one around the pending ones.
      let of = i - 1;
      const around = open[of];
      if (around?.state === 'alias') of = around.of;
      if (of < 0 || this.#dirty) {
        this.run(`savepoint ${open[i]!.name}`);
        open[i] = { name: open[i]!.name, state: 'sent' };
        of = i++;
      }
      for (; i < open.length; i++) open[i] = { name: open[i]!.name, state: 'alias', of };
      this.#firstPending = open.length;
    }
    this.#dirty = true;
  }

  /** A unit began or ended: no savepoint of it is left to open. */
  reset(): void {
    this.#forget(0);
    this.#dirty = true;
  }

  /** How many savepoints wait for a write (for tests). */
  get deferred(): number {
    return this.#open.length - this.#firstPending;
  }

  /** Ending the savepoint at `at` ends every one inside it: the outermost sent one among them is released with it. */
  #release(at: number): void {
    const open = this.#open;
    for (let i = at; i < open.length; i++) {
      if (open[i]!.state !== 'sent') continue;
      this.run(`release ${open[i]!.name}`);
      // What it held now belongs to the savepoint around it.
      this.#dirty = true;
      break;
    }
    this.#forget(at);
  }

  /** Undoes what was written since the savepoint at `at` began; it stays open, the ones inside it end. */
  #rollbackTo(at: number): void {
    const entry = this.#open[at]!;
    if (entry.state !== 'pending') {
      const shared = entry.state === 'alias' ? this.#open[entry.of]!.name : entry.name;
      this.run(`rollback to ${shared}`);
      this.#dirty = false;
    }
    this.#forget(at + 1);
  }

  /** Drops the savepoints from `from` on (SQLite has ended them, or never had them). */
  #forget(from: number): void {
    if (from >= this.#open.length) return;
    this.#open.length = from;
    if (this.#firstPending > from) this.#firstPending = from;
  }

  #indexOf(name: string): number {
    for (let i = this.#open.length - 1; i >= 0; i--) if (this.#open[i]!.name === name) return i;
    return -1;
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
}
