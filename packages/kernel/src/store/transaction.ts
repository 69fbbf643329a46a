import { sql } from 'kysely';
import {
  LibosError,
  newId,
  type AuditEntry,
  type AuditSink,
  type Authority,
  type Clock,
  type EmittedEvent,
  type EventSink,
  type RuntimeInstance,
  type ServiceScope,
} from '@libos/sdk';
import type { AuditRecord, EventBus, RuntimeEvent } from '../events/event-bus.js';
import { appendBufferOf, commitWithAppends, flushAppends } from './append-buffer.js';
import type { AppendLog } from './append-log.js';
import { beginTransaction } from './direct-queries.js';
import { bindMemo, memoForTransaction, memoOf } from './memo-of.js';
import { undoAll } from './undo-hooks.js';
import { unitOf, type UnitOfWork } from './unit-of-work.js';
import type { KernelStore, KernelTransaction } from './kernel-database.js';
import type { KernelScope } from './kernel-scope.js';

/** What the kernel needs to build a scope: resolvers for services and authority, the bus, the clock. */
export interface ScopeFactory {
  readonly clock: Clock;
  readonly bus: EventBus;
  service(name: string, scope: ServiceScope): unknown;
  /** Whether `service` resolves `name` (`ServiceScope.hasService`); without it a scope says nothing of its services. */
  hasService?(name: string): boolean;
  authority(scope: ServiceScope, pid: string): Authority;
  /**
   * The store adapter's fast multi-row inserts into `events` and `audit_records` (what `append-buffer.ts` writes a
   * savepoint's or transaction's rows with); without one, kysely writes them.
   */
  readonly appendLog?: AppendLog;
  /**
   * Runs one statement without parameters on the store's connection (SAVEPOINT, RELEASE, ROLLBACK TO: a call makes
   * a few, and kysely's query builder costs more than the statement); without it, kysely runs them.
   */
  readonly exec?: (sql: string) => void;
  /** The runtime instance every scope names (`ServiceScope.runtime`): what holds runtime-local payloads. */
  readonly runtime?: RuntimeInstance;
  /** Plugin handlers by event type, run in the emitting transaction (`PluginHooks.events`). */
  readonly eventHooks?: ReadonlyMap<string, readonly ((scope: ServiceScope, event: EmittedEvent) => Promise<void>)[]>;
}

/** A ServiceScope bound to one transaction of the kernel's store, plus the actor its audit rows name. */
export interface TxScope extends KernelScope {
  readonly store: KernelTransaction;
  /** Audit rows written through this scope name this actor (a pid, or `host`). */
  readonly actor: string;
  readonly callId: string | null;
}

/** `v` as JSON text, or (not JSON: a cycle, a bigint) the rejected promise `emit` and `record` return for it. */
function jsonOf(v: unknown): string | Promise<never> {
  try {
    return JSON.stringify(v ?? {});
  } catch (err) {
    return Promise.reject(err);
  }
}

/** A record whose `seq` the append buffer fills in when its row is written. */
type Sequenced<R extends { readonly seq: number }> = Omit<R, 'seq'> & { seq: number };

/** The last timestamp rendered: a call writes several rows in the same millisecond, and `toISOString` is not free. */
let lastIso = { ms: Number.NaN, text: '' };
const isoOf = (d: Date): string => {
  const ms = d.getTime();
  if (ms !== lastIso.ms) lastIso = { ms, text: d.toISOString() };
  return lastIso.text;
};

/**
 * What `emit` and `record` return when nothing is left to wait for: they only buffer a row, and an async function
 * cost each of a call's eight rows a promise of its own.
 */
const DONE: Promise<void> = Promise.resolve();

/** A plugin's handlers of one event type, in order, in the emitting transaction (`PluginHooks.events`). */
async function runEventHooks(
  hooks: readonly ((scope: ServiceScope, event: EmittedEvent) => Promise<void>)[],
  scope: ServiceScope,
  event: EmittedEvent,
): Promise<void> {
  for (const hook of hooks) await hook(scope, event);
}

function makeScope(
  trx: KernelTransaction,
  f: ScopeFactory,
  actor: string,
  callId: string | null,
  commits: (() => void)[],
  rollbacks: (() => void)[],
): TxScope {
  const nowIso = () => isoOf(f.clock.now());
  // The transaction's memo, handed to every scope (`ServiceScope.memo`): the store's, or on a store many hosts share,
  // this transaction's own (`memoForTransaction`); without one, reads go to the store.
  const memo = memoOf(trx);
  // Rows are buffered, not written: see `inTransaction` for when they reach the store.
  const appends = appendBufferOf(trx, f.appendLog);
  const events: EventSink = {
    /**
     * An event belongs to the process its data names (`data.pid`), else to the acting process. Its row is buffered;
     * its `seq` is known once the row is written, before the commit its bus emission waits for. Hooks run now.
     */
    emit(type, data = {}) {
      const text = jsonOf(data);
      if (typeof text !== 'string') return text; // data that is not JSON: the emit fails, nothing is buffered
      const row = {
        id: newId('evt'),
        ts: nowIso(),
        pid: typeof data.pid === 'string' ? data.pid : actor.startsWith('pid_') ? actor : null,
        type,
        data: text,
      };
      const event: Sequenced<RuntimeEvent> = { seq: 0, id: row.id, ts: row.ts, pid: row.pid, type, data };
      appends.event(row, event);
      commits.push(() => f.bus.emit('event', event));
      const hooks = f.eventHooks?.get(type);
      return hooks ? runEventHooks(hooks, scope, { id: row.id, type, data }) : DONE;
    },
  };
  const audit: AuditSink = {
    record(entry: AuditEntry) {
      const details = jsonOf(entry.details);
      if (typeof details !== 'string') return details;
      const row = {
        id: newId('aud'),
        ts: nowIso(),
        actor,
        action: entry.action,
        target: entry.target ?? null,
        decision: entry.decision ?? null,
        call_id: callId,
        details,
      };
      const rec: Sequenced<AuditRecord> = {
        seq: 0,
        id: row.id,
        ts: row.ts,
        actor,
        action: row.action,
        target: row.target,
        decision: row.decision,
        callId,
        details: entry.details ?? {},
      };
      appends.audit(row, rec);
      commits.push(() => f.bus.emit('audit', rec));
      return DONE;
    },
  };
  const scope: TxScope = {
    store: trx,
    actor,
    callId,
    clock: f.clock,
    events,
    audit,
    afterCommit: (fn) => void commits.push(fn),
    onRollback: (fn) => void rollbacks.push(fn),
    service: <T>(name: string) => f.service(name, scope) as T,
    hasService: f.hasService, // undefined when the factory cannot say: `optionalService` then asks `service`
    authorityFor: (pid: string) => f.authority(scope, pid),
    ...(f.runtime ? { runtime: f.runtime } : {}),
    ...(memo ? { memo } : {}),
  };
  return scope;
}

/**
 * BEGIN, `body`, the rows `body` emitted (one insert per table), COMMIT; ROLLBACK on any failure. The error that
 * failed the transaction is the one thrown: a ROLLBACK that fails too (the store is then in an unknown state) is
 * `store_poisoned`, whose message starts with that error and whose cause holds both.
 */
async function runTransaction<T>(db: KernelStore, body: (trx: KernelTransaction) => Promise<T>): Promise<T> {
  const trx = await beginTransaction(db);
  bindMemo(trx, memoForTransaction(db));
  try {
    const result = await body(trx);
    await commitWithAppends(db, trx);
    return result;
  } catch (err) {
    try {
      await trx.rollback().execute();
    } catch (rollbackErr) {
      const first = LibosError.from(err);
      const both = `${first.code}: ${first.message} (and the rollback that followed failed: ${(rollbackErr as Error).message})`;
      throw new LibosError('store_poisoned', both, {
        details: { error: first.toJSON() },
        cause: new AggregateError([err, rollbackErr]),
      });
    }
    throw err;
  }
}

/** How `inTransaction` is used. */
export interface TransactionOptions {
  /**
   * Inside a unit of work opened with `endsAfterLast` and not inside another savepoint: when this ends well, the
   * unit does no more store work, so its COMMIT may go with this savepoint's rows (K-15.21). Ignored elsewhere.
   */
  readonly last?: boolean;
}

/**
 * Runs `fn` in one store transaction. State, events and audit commit together or not at all; `afterCommit`
 * callbacks run after a commit, `onRollback` callbacks (newest first) after a rollback.
 *
 * The events and audit records `fn` emits are buffered (`append-buffer.ts`) and written as one multi-row insert per
 * table when `fn` has ended well, just before the COMMIT (inside a unit: with the rows of the unit's other
 * savepoints, at the unit's COMMIT, K-9.27), so an insert that fails fails the transaction it commits; on a rollback
 * they are dropped unwritten. A read of `events` or `audit_records` inside `fn` calls `flushAppends` first. Their
 * bus emissions, after the commit, carry the `seq` the insert returned; event hooks (`ScopeFactory.eventHooks`) run at
 * emit time, without it.
 *
 * @example
 * async function recordDemo(store: KernelStore, factory: ScopeFactory) {
 *   await inTransaction(store, factory, 'host', null, (scope) => scope.audit.record({ action: 'demo' }));
 * }
 */
export async function inTransaction<T>(
  db: KernelStore,
  f: ScopeFactory,
  actor: string,
  callId: string | null,
  fn: (scope: TxScope) => Promise<T>,
  opts: TransactionOptions = {},
): Promise<T> {
  const unit = unitOf(db);
  if (unit) return inSavepoint(unit.trx, unit, f, actor, callId, fn, opts.last === true);
  const commits: (() => void)[] = [];
  const rollbacks: (() => void)[] = [];
  let result: T;
  try {
    result = await runTransaction(db, (trx) => fn(makeScope(trx, f, actor, callId, commits, rollbacks)));
  } catch (err) {
    undoAll(rollbacks, err);
    throw err;
  }
  for (const done of commits) done();
  return result;
}

/**
 * `inTransaction` inside a unit of work (`unit-of-work.ts`): a SAVEPOINT that ends on success (RELEASE; on
 * PostgreSQL the driver leaves it to the unit's COMMIT, one round trip less; its hooks join the unit's, run when the unit commits)
 * or is rolled back to on failure (its undo hooks run at once), so the body commits or rolls back on its own
 * exactly as a transaction would, and the disk sees it when the unit commits.
 * Its events and audit records stay pending when it ends well, with those of the savepoints before it, until the
 * unit ends or something reads those tables (K-9.27); on a rollback its own are dropped and those pending when it
 * opened kept (a flush inside it wrote them, and the rollback undid that). The `last` savepoint of a unit opened
 * with `endsAfterLast` (K-15.21) is the unit's last act when it ends well: the unit's pending rows may carry the COMMIT.
 */
async function inSavepoint<T>(
  trx: KernelTransaction,
  unit: UnitOfWork,
  f: ScopeFactory,
  actor: string,
  callId: string | null,
  fn: (scope: TxScope) => Promise<T>,
  last: boolean,
): Promise<T> {
  const name = `libos_sp_${unit.next++}`;
  const rides = last && unit.endsAfterLast && unit.depth === 0;
  const exec = f.exec;
  const run = exec ? async (q: string) => exec(q) : async (q: string) => void (await sql.raw(q).execute(trx));
  const commits: (() => void)[] = [];
  const rollbacks: (() => void)[] = [];
  const appends = appendBufferOf(trx, f.appendLog);
  const pendingBefore = appends.mark();
  await run(`savepoint ${name}`);
  unit.depth++;
  let result: T;
  try {
    result = await fn(makeScope(trx, f, actor, callId, commits, rollbacks));
    // The unit's last act: its rows may carry the unit's COMMIT (K-15.21). If they fail, nothing committed and this
    // savepoint rolls back as after any failure.
    if (rides) await flushAppends(trx, true);
  } catch (err) {
    appends.rollbackTo(pendingBefore);
    const rollbackErrors: unknown[] = [];
    try {
      await run(`rollback to ${name}`);
      await run(`release ${name}`);
    } catch (rollbackErr) {
      rollbackErrors.push(rollbackErr);
    }
    undoAll(rollbacks, err, rollbackErrors);
    throw err;
  } finally {
    unit.depth--;
  }
  // On PostgreSQL the driver sends no RELEASE (the unit's COMMIT ends the savepoint; a ROLLBACK TO an enclosing one
  // undoes it with the rest) and drops a savepoint that nothing ran in unsent (`postgres/memo-driver.ts`); on SQLite
  // `exec` sends a savepoint only once something writes in it (`sqlite/deferred-savepoints.ts`, K-9.14).
  await run(`release ${name}`);
  unit.commits.push(...commits);
  unit.rollbacks.push(...rollbacks);
  return result;
}
