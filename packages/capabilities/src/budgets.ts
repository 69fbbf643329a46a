// Long file: the budget engine is one class over one tree state (accounts, charges, reservations, kills).
import {
  BUDGET_FIELDS,
  LibosError,
  preparedQuery,
  runGuarded,
  type BudgetField,
  type Budgets,
  type ServiceScope,
  type Usage,
} from '@libos/sdk';
import {
  applyDelta,
  overruns,
  parseLimits,
  parseUsage,
  remainingOf,
  REAL_FIELDS,
  type Account,
  type Counters,
  type Limits,
  type Overrun,
  type TreeState,
} from './internal/budget-tree.js';
import { audit, type EngineEnv } from './internal/env.js';
import { T, changed, dbOf, parseJsonColumn, readThrough, writeThrough, type Db } from './internal/store.js';

/** Budget limits of one account. null/absent = unlimited (still bounded by every ancestor's limit). */
export type BudgetLimits = Partial<Record<BudgetField, number | null>>;

/** Default limits of a root process: 256 tool calls, 16 child processes, the rest unlimited. */
export const DEFAULT_ROOT_LIMITS: Readonly<BudgetLimits> = Object.freeze({ tool_calls: 256, child_processes: 16 });

/** What a post-hoc overage charge did: the usage is recorded; `killPids` must be killed by the kernel. */
export interface OverageOutcome {
  readonly exceeded: Overrun | null;
  /** The nearest over-limit member and its whole open subtree, now marked killed-by-budget. */
  readonly killPids: readonly string[];
}

/**
 * Budgets of the process tree (docs/behaviour/capabilities.md). Every charge hits the pid and all its ancestors in the scope's
 * transaction; a preflight refuses (nothing charged anywhere) when any member would exceed its limit.
 *
 * Overage contract: `charge(pid, usage, { allowOverage: true })` records the usage even past a limit
 * (post-charged LLM tokens, subprocess time); when a member is now over, the nearest such member and its
 * open subtree are marked killed, their provider reservations released, a critical `resource.limit_exceeded`
 * event and audit written, and then it throws `resource_limit_exceeded` with `details.killPids`.
 * Those writes are in the transaction: the kernel must commit it and kill exactly `details.killPids`
 * (or call `chargeOverage`, which returns the same outcome instead of throwing).
 *
 * @example
 * import type { AuthorityEngine } from '@libos/capabilities';
 * declare const engine: AuthorityEngine, rootPid: string, childPid: string;
 * const budgets = engine.budgets(scope);
 * await budgets.openAccount(rootPid, null);                       // tool_calls 256, child_processes 16
 * await budgets.openAccount(childPid, rootPid);                   // half of the root's remaining, reserved
 * await budgets.charge(childPid, { tool_calls: 1 });              // child, and root, +1
 */
export interface BudgetEngine extends Budgets {
  /** Opens the budget account of a process (see the class doc for child envelopes). */
  openAccount(pid: string, parentPid: string | null, limits?: BudgetLimits): Promise<void>;
  /** Releases the rest of a terminated child's envelope back to its parent. */
  closeAccount(pid: string): Promise<void>;
  usage(pid: string): Promise<{ limits: BudgetLimits; usage: Usage; remaining: Partial<Record<BudgetField, number | null>> }>;
  /** Checks that `usage` would fit the pid and every ancestor, without charging (a parallel batch is preflighted whole). */
  preflight(pid: string, usage: Usage): Promise<void>;
  /** Post-hoc charge that never refuses: returns which pids the kernel must kill instead of throwing. */
  chargeOverage(pid: string, usage: Usage): Promise<OverageOutcome>;
  /** Reserves a provider envelope (counted in every ancestor's load until settled). Returns its id. */
  reserveUsage(pid: string, max: Usage): Promise<string>;
  /** Settles a provider envelope once with the actual usage (must be ≤ the reserved maximum). */
  settleUsage(reservationId: string, actual: Usage): Promise<void>;
  /** Settles a provider envelope by charging its whole maximum (usage unknown). */
  chargeMaximum(reservationId: string): Promise<void>;
  /** Releases a provider envelope that never started. */
  releaseUsage(reservationId: string): Promise<void>;
  /** The pids of the open subtree under `pid` (inclusive), from the accounts table. */
  subtree(pid: string): Promise<string[]>;
}

/** An account's row, its close, its active envelopes: compiled once per store (every process's end asks each). */
const ACCOUNT_OF = preparedQuery(1, (db: Db, [pid]) => db.selectFrom(T.accounts).selectAll().where('pid', '=', pid));
const CLOSE_ACCOUNT = preparedQuery(2, (db: Db, [closedAt, pid]) =>
  db.updateTable(T.accounts).set({ status: 'closed', closed_at: closedAt }).where('pid', '=', pid),
);
const ACTIVE_USAGE_RESERVATIONS = preparedQuery(1, (db: Db, [pid]) =>
  db.selectFrom(T.usageReservations).selectAll().where('pid', '=', pid).where('status', '=', 'active'),
);

/**
 * The accounts of a chain (a pid and its ancestors) and the open children of each: one query compiled per chain
 * length (a tree is a few levels deep), bound to the chain twice.
 */
const TREE_OF = new Map<number, ReturnType<typeof treeQuery>>();
const treeQuery = (n: number) =>
  preparedQuery(2 * n, (db: Db, args) =>
    db
      .selectFrom(T.accounts)
      .selectAll()
      .where((eb) =>
        eb.or([eb('pid', 'in', args.slice(0, n)), eb.and([eb('parent_pid', 'in', args.slice(n)), eb('status', '=', 'open')])]),
      ),
  );
const treeOf = (n: number) => {
  let q = TREE_OF.get(n);
  if (!q) TREE_OF.set(n, (q = treeQuery(n)));
  return q;
};

/** The CAS write of a charge: new usage and reserved of one account, if they still hold what the charge read. */
const SET_COUNTERS = preparedQuery(5, (db: Db, [usage, reserved, pid, usageWas, reservedWas]) =>
  db
    .updateTable(T.accounts)
    .set({ usage, reserved })
    .where('pid', '=', pid)
    .where('usage', '=', usageWas)
    .where('reserved', '=', reservedWas),
);

interface AccountRow {
  pid: string;
  parent_pid: string | null;
  ancestors: string;
  limits: string;
  usage: string;
  reserved: string;
  status: string;
}

function fromRow(r: AccountRow): Account {
  return {
    pid: r.pid,
    parentPid: r.parent_pid,
    ancestors: parseJsonColumn<string[]>(r.ancestors, 'cap_budget_accounts.ancestors'),
    limits: parseJsonColumn<Limits>(r.limits, 'cap_budget_accounts.limits'),
    usage: parseJsonColumn<Counters>(r.usage, 'cap_budget_accounts.usage'),
    reserved: parseJsonColumn<Counters>(r.reserved, 'cap_budget_accounts.reserved'),
    status: r.status as Account['status'],
  };
}

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(3));

function limitError(o: Overrun, delta: Usage, extra: Record<string, unknown> = {}): LibosError {
  return new LibosError(
    'resource_limit_exceeded',
    `${o.field}: limit ${fmt(o.limit)} of ${o.pid} exceeded (load would be ${fmt(o.load)} after +${fmt(delta[o.field] ?? 0)})`,
    { details: { field: o.field, pid: o.pid, limit: o.limit, load: o.load, requested: delta[o.field] ?? 0, ...extra } },
  );
}

/**
 * Each account's ancestors (parent first), per engine: fixed when the account opens. An account's entry goes when it
 * closes, and the map starts over past `ANCESTORS_MOST` (a cache: a miss reads the row), so a runtime that has run
 * many processes does not keep one entry per process it ever charged (K-9.13).
 */
const ANCESTORS = new WeakMap<EngineEnv, Map<string, readonly string[]>>();
const ANCESTORS_MOST = 50_000;
const ancestorsOf = (env: EngineEnv): Map<string, readonly string[]> => {
  let m = ANCESTORS.get(env);
  if (!m) ANCESTORS.set(env, (m = new Map()));
  else if (m.size >= ANCESTORS_MOST) m.clear();
  return m;
};

class BudgetEngineImpl implements BudgetEngine {
  constructor(
    private readonly env: EngineEnv,
    private readonly scope: ServiceScope,
    private readonly db: Db,
  ) {}

  private async account(pid: string): Promise<Account | null> {
    const row = (await this.db.executeQuery(ACCOUNT_OF(this.db, [pid]))).rows[0] as AccountRow | undefined;
    return row ? fromRow(row) : null;
  }

  private async mustAccount(pid: string): Promise<Account> {
    const a = await this.account(pid);
    if (!a) throw new LibosError('not_found', `pid: no budget account for ${pid}`, { details: { field: 'pid', pid } });
    return a;
  }

  /**
   * The chain pid → root plus the open children of each chain member, in one query once the pid's ancestors are
   * known (they never change after its account opens, so they are kept per engine: a charge is one read, not two).
   */
  private state(pid: string): Promise<TreeState> {
    return readThrough(this.db, [T.accounts], `budget:${pid}`, () => this.loadState(pid));
  }

  private async loadState(pid: string): Promise<TreeState> {
    const known = ancestorsOf(this.env);
    const ancestors = known.get(pid);
    // Ancestors not known yet: read as if `pid` were a root (its row and its open children). The row says its
    // ancestors; for a root (most processes) that one read is the whole state, else the chain is read again.
    let chain = [pid, ...(ancestors ?? [])];
    let rows = (await this.db.executeQuery(treeOf(chain.length)(this.db, [...chain, ...chain]))).rows as AccountRow[];
    if (!ancestors) {
      const own = rows.find((r) => r.pid === pid);
      if (!own) throw new LibosError('not_found', `pid: no budget account for ${pid}`, { details: { field: 'pid', pid } });
      const found = fromRow(own).ancestors;
      known.set(pid, found);
      if (found.length > 0) {
        chain = [pid, ...found];
        rows = (await this.db.executeQuery(treeOf(chain.length)(this.db, [...chain, ...chain]))).rows as AccountRow[];
      }
    }
    const accounts = new Map<string, Account>();
    for (const r of rows) accounts.set(r.pid, fromRow(r));
    if (!accounts.has(pid)) throw new LibosError('not_found', `pid: no budget account for ${pid}`, { details: { field: 'pid', pid } });
    const children = new Map<string, string[]>();
    for (const a of accounts.values()) {
      if (a.status !== 'open' || a.parentPid === null || !chain.includes(a.parentPid)) continue;
      children.set(a.parentPid, [...(children.get(a.parentPid) ?? []), a.pid]);
    }
    return { accounts, children };
  }

  /** Writes changed usage/reserved of every account in `after` (CAS on the previous values). */
  private async persist(before: TreeState, after: TreeState): Promise<void> {
    for (const [pid, a] of after.accounts) {
      const b = before.accounts.get(pid)!;
      if (b.usage === a.usage && b.reserved === a.reserved) continue;
      const args = [JSON.stringify(a.usage), JSON.stringify(a.reserved), pid, JSON.stringify(b.usage), JSON.stringify(b.reserved)];
      // Guarded: on PostgreSQL the write may go with the unit's next round trip, and a miss fails the unit there.
      await runGuarded(this.db, SET_COUNTERS(this.db, args), {
        rows: 1,
        error: () => new LibosError('conflict', `budget account ${pid} changed concurrently; retry the charge`, { details: { pid } }),
      });
    }
  }

  private assertChargeable(state: TreeState, pid: string): void {
    const a = state.accounts.get(pid)!;
    if (a.status === 'killed')
      throw new LibosError('resource_limit_exceeded', `pid: ${pid} was killed by its budget; nothing more can be charged`, {
        details: { pid, killed: true },
      });
    if (a.status === 'closed') throw new LibosError('invalid_state', `pid: the budget account of ${pid} is closed`, { details: { pid } });
  }

  async preflight(pid: string, usage: Usage): Promise<void> {
    const delta = parseUsage(usage);
    const state = await this.state(pid);
    this.assertChargeable(state, pid);
    const over = overruns(applyDelta(state, pid, delta, 'usage'), pid, delta);
    if (over.length > 0) throw limitError(over[0]!, delta);
  }

  async charge(pid: string, usage: Usage, opts: { readonly allowOverage?: boolean } = {}): Promise<void> {
    const outcome = await this.chargeInner(pid, usage, opts.allowOverage === true);
    if (outcome.exceeded) throw limitError(outcome.exceeded, parseUsage(usage), { killPids: outcome.killPids });
  }

  async chargeOverage(pid: string, usage: Usage): Promise<OverageOutcome> {
    return this.chargeInner(pid, usage, true);
  }

  private async chargeInner(pid: string, usage: Usage, allowOverage: boolean): Promise<OverageOutcome> {
    const delta = parseUsage(usage);
    const state = await this.state(pid);
    this.assertChargeable(state, pid);
    const after = applyDelta(state, pid, delta, 'usage');
    const over = overruns(after, pid, delta);
    const chargedPids = [pid, ...state.accounts.get(pid)!.ancestors];
    if (over.length > 0 && !allowOverage) {
      const o = over[0]!;
      await audit(this.scope, 'resource.preflight_denied', pid, 'denied', {
        usage: delta,
        ownerPid: o.pid,
        field: o.field,
        limit: o.limit,
        load: o.load,
      });
      throw limitError(o, delta);
    }
    await this.persist(state, after);
    // The charge wrote exactly `after`: the next charge of this pid reads it from the memo (write-through).
    writeThrough(this.db, [T.accounts], `budget:${pid}`, after);
    await this.scope.events.emit('resource.charged', { pid, usage: delta, chargedPids });
    await audit(this.scope, 'resource.charge', pid, 'charged', { usage: delta, chargedPids, overage: allowOverage });
    if (over.length === 0) return { exceeded: null, killPids: [] };
    const o = over[0]!;
    const killPids = await this.killSubtree(o.pid);
    await this.scope.events.emit('resource.limit_exceeded', {
      severity: 'critical',
      ownerPid: o.pid,
      field: o.field,
      limit: o.limit,
      load: o.load,
      killedPids: killPids,
    });
    await audit(this.scope, 'resource.limit_exceeded', o.pid, 'killed', {
      ownerPid: o.pid,
      field: o.field,
      limit: o.limit,
      load: o.load,
      killedPids: killPids,
    });
    return { exceeded: o, killPids };
  }

  async subtree(pid: string): Promise<string[]> {
    const out: string[] = [];
    const root = await this.account(pid);
    if (root?.status !== 'open') return out;
    let frontier = [pid];
    out.push(pid);
    while (frontier.length > 0) {
      const rows = (await this.db
        .selectFrom(T.accounts)
        .select('pid')
        .where('parent_pid', 'in', frontier)
        .where('status', '=', 'open')
        .execute()) as { pid: string }[];
      frontier = rows.map((r) => r.pid).filter((p) => !out.includes(p));
      out.push(...frontier);
    }
    return out;
  }

  private async killSubtree(pid: string): Promise<string[]> {
    const pids = await this.subtree(pid);
    for (const p of pids) {
      for (const r of await this.activeUsageReservations(p)) await this.endUsageReservation(r, 'released', {});
      await this.db
        .updateTable(T.accounts)
        .set({ status: 'killed', closed_at: this.env.clock.now().toISOString() })
        .where('pid', '=', p)
        .where('status', '=', 'open')
        .execute();
    }
    return pids;
  }

  async remaining(pid: string): Promise<Partial<Record<BudgetField, number | null>>> {
    return remainingOf(await this.state(pid), pid);
  }

  async usage(pid: string): Promise<{ limits: BudgetLimits; usage: Usage; remaining: Partial<Record<BudgetField, number | null>> }> {
    const state = await this.state(pid);
    const a = state.accounts.get(pid)!;
    const limits: BudgetLimits = {};
    const usage: Usage = {};
    for (const f of BUDGET_FIELDS) {
      limits[f] = a.limits[f] ?? null;
      usage[f] = a.usage[f] ?? 0;
    }
    return { limits, usage, remaining: remainingOf(state, pid) };
  }

  async openAccount(pid: string, parentPid: string | null, limits?: BudgetLimits): Promise<void> {
    if (typeof pid !== 'string' || pid === '' || pid.length > 256)
      throw new LibosError('invalid_arguments', 'pid: must be a non-empty string', { details: { field: 'pid' } });
    const asked = parseLimits(limits);
    if (await this.account(pid))
      throw new LibosError('conflict', `pid: a budget account for ${pid} already exists`, { details: { field: 'pid', pid } });
    const now = this.env.clock.now().toISOString();
    if (parentPid === null) {
      const full: BudgetLimits = { ...DEFAULT_ROOT_LIMITS, ...asked };
      await this.insert(pid, null, [], full, now);
      await audit(this.scope, 'resource.open_account', pid, 'opened', { pid, parentPid: null, limits: full });
      return;
    }
    const state = await this.state(parentPid);
    this.assertChargeable(state, parentPid);
    const spawn: Usage = { child_processes: 1 };
    const after = applyDelta(state, parentPid, spawn, 'usage');
    const over = overruns(after, parentPid, spawn);
    if (over.length > 0) throw limitError(over[0]!, spawn);
    const rem = remainingOf(after, parentPid);
    const child: BudgetLimits = {};
    for (const f of BUDGET_FIELDS) {
      const r = rem[f];
      if (f in asked) {
        const v = asked[f]!;
        if (v !== null && r !== null && v > r) {
          throw new LibosError('resource_limit_exceeded', `limits.${f}: ${fmt(v)} exceeds the remaining ${fmt(r)} of parent ${parentPid}`, {
            details: { field: f, pid: parentPid, limit: v, remaining: r },
          });
        }
        child[f] = v;
        continue;
      }
      if (r === null) child[f] = null;
      else {
        const half = REAL_FIELDS.has(f) ? r / 2 : Math.floor(r / 2);
        const v = f === 'tool_calls' ? Math.max(1, half) : half;
        if (v > r)
          throw new LibosError(
            'resource_limit_exceeded',
            `limits.${f}: parent ${parentPid} has ${fmt(r)} left; a child needs at least ${fmt(v)}`,
            { details: { field: f, pid: parentPid, limit: v, remaining: r } },
          );
        child[f] = v;
      }
    }
    const parent = state.accounts.get(parentPid)!;
    await this.persist(state, after);
    await this.insert(pid, parentPid, [parentPid, ...parent.ancestors], child, now);
    await this.scope.events.emit('resource.charged', { pid: parentPid, usage: spawn, chargedPids: [parentPid, ...parent.ancestors] });
    await audit(this.scope, 'resource.reserve_child_budget', pid, 'reserved', {
      pid,
      parentPid,
      envelope: child,
      chargedPids: [parentPid, ...parent.ancestors],
    });
  }

  private async insert(
    pid: string,
    parentPid: string | null,
    ancestors: readonly string[],
    limits: BudgetLimits,
    now: string,
  ): Promise<void> {
    await this.db
      .insertInto(T.accounts)
      .values({
        pid,
        parent_pid: parentPid,
        ancestors: JSON.stringify(ancestors),
        limits: JSON.stringify(limits),
        usage: '{}',
        reserved: '{}',
        status: 'open',
        opened_at: now,
        closed_at: null,
      })
      .execute();
  }

  async closeAccount(pid: string): Promise<void> {
    const a = await this.mustAccount(pid);
    if (a.status === 'closed')
      throw new LibosError('invalid_state', `pid: the budget account of ${pid} is already closed`, { details: { pid } });
    let released = 0;
    for (const r of await this.activeUsageReservations(pid)) {
      await this.endUsageReservation(r, 'released', {});
      released++;
    }
    await this.db.executeQuery(CLOSE_ACCOUNT(this.db, [this.env.clock.now().toISOString(), pid]));
    ancestorsOf(this.env).delete(pid); // charged no more (a late read of the closed account reads its row again)
    await audit(this.scope, 'resource.close_account', pid, 'closed', {
      pid,
      parentPid: a.parentPid,
      wasKilled: a.status === 'killed',
      releasedReservations: released,
    });
  }

  // ---- provider envelopes

  private async activeUsageReservations(pid: string): Promise<UsageReservationRow[]> {
    return (await this.db.executeQuery(ACTIVE_USAGE_RESERVATIONS(this.db, [pid]))).rows as UsageReservationRow[];
  }

  async reserveUsage(pid: string, max: Usage): Promise<string> {
    const delta = parseUsage(max, 'max');
    const state = await this.state(pid);
    this.assertChargeable(state, pid);
    const after = applyDelta(state, pid, delta, 'reserved');
    const over = overruns(after, pid, delta);
    if (over.length > 0) {
      await audit(this.scope, 'resource.preflight_denied', pid, 'denied', {
        usage: delta,
        ownerPid: over[0]!.pid,
        field: over[0]!.field,
        reservation: true,
      });
      throw limitError(over[0]!, delta);
    }
    await this.persist(state, after);
    const id = this.env.ids.next('bres');
    await this.db
      .insertInto(T.usageReservations)
      .values({
        id,
        pid,
        max: JSON.stringify(delta),
        status: 'active',
        created_at: this.env.clock.now().toISOString(),
        settled_at: null,
        actual: null,
      })
      .execute();
    await audit(this.scope, 'resource.reserve_usage', pid, 'reserved', { reservationId: id, max: delta });
    return id;
  }

  private async usageReservation(id: string): Promise<UsageReservationRow> {
    const r = (await this.db.selectFrom(T.usageReservations).selectAll().where('id', '=', id).executeTakeFirst()) as
      | UsageReservationRow
      | undefined;
    if (!r) throw new LibosError('not_found', `reservationId: no budget reservation ${id}`, { details: { field: 'reservationId' } });
    if (r.status !== 'active')
      throw new LibosError('conflict', `reservationId: ${id} is already ${r.status}`, {
        details: { field: 'reservationId', status: r.status },
      });
    return r;
  }

  /** Ends an active envelope: removes its reservation from the chain and charges `actual` (if any). */
  private async endUsageReservation(
    r: UsageReservationRow,
    status: 'settled' | 'released' | 'charged_maximum',
    actual: Usage,
  ): Promise<void> {
    const max = parseJsonColumn<Usage>(r.max, 'cap_budget_reservations.max');
    const res = await this.db
      .updateTable(T.usageReservations)
      .set({ status, settled_at: this.env.clock.now().toISOString(), actual: JSON.stringify(actual) })
      .where('id', '=', r.id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (changed(res) !== 1)
      throw new LibosError('conflict', `reservationId: ${r.id} was settled concurrently`, { details: { field: 'reservationId' } });
    const state = await this.state(r.pid);
    let after = applyDelta(state, r.pid, max, 'reserved', -1);
    if (Object.keys(actual).length > 0) after = applyDelta(after, r.pid, actual, 'usage');
    await this.persist(state, after);
    const chargedPids = [r.pid, ...state.accounts.get(r.pid)!.ancestors];
    await audit(this.scope, `resource.${status === 'released' ? 'release_usage' : 'settle_usage'}`, r.pid, status, {
      reservationId: r.id,
      max,
      actual,
      chargedPids,
    });
    if (Object.keys(actual).length > 0) await this.scope.events.emit('resource.charged', { pid: r.pid, usage: actual, chargedPids });
  }

  async settleUsage(reservationId: string, actual: Usage): Promise<void> {
    const r = await this.usageReservation(reservationId);
    const a = parseUsage(actual, 'actual');
    const max = parseJsonColumn<Usage>(r.max, 'cap_budget_reservations.max');
    for (const [k, v] of Object.entries(a)) {
      const m = max[k as BudgetField] ?? 0;
      if ((v ?? 0) > m)
        throw new LibosError('invalid_arguments', `actual.${k}: ${fmt(v ?? 0)} exceeds the reserved maximum ${fmt(m)}`, {
          details: { field: `actual.${k}`, max: m, actual: v },
        });
    }
    await this.endUsageReservation(r, 'settled', a);
  }

  async chargeMaximum(reservationId: string): Promise<void> {
    const r = await this.usageReservation(reservationId);
    await this.endUsageReservation(r, 'charged_maximum', parseJsonColumn<Usage>(r.max, 'cap_budget_reservations.max'));
  }

  async releaseUsage(reservationId: string): Promise<void> {
    await this.endUsageReservation(await this.usageReservation(reservationId), 'released', {});
  }
}

interface UsageReservationRow {
  id: string;
  pid: string;
  max: string;
  status: string;
}

/** The budget engine bound to one transaction. */
export function budgetEngine(env: EngineEnv, scope: ServiceScope): BudgetEngine {
  return new BudgetEngineImpl(env, scope, dbOf(scope));
}
