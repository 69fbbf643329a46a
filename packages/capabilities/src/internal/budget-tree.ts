import { BUDGET_FIELDS, LibosError, type BudgetField, type Usage } from '@libos/sdk';

/** Per-field numbers; absent = 0 for usage/reserved, absent/null = unlimited for limits. */
export type Counters = Partial<Record<BudgetField, number>>;
export type Limits = Partial<Record<BudgetField, number | null>>;

/** One budget account (a process). */
export interface Account {
  readonly pid: string;
  readonly parentPid: string | null;
  /** Parent first, root last. */
  readonly ancestors: readonly string[];
  readonly limits: Limits;
  readonly usage: Counters;
  /** Active provider reservations in this account's subtree. */
  readonly reserved: Counters;
  readonly status: 'open' | 'closed' | 'killed';
}

/** Fields that are real numbers (seconds); every other field is an integral count. */
export const REAL_FIELDS: ReadonlySet<BudgetField> = new Set<BudgetField>(['runtime_seconds']);

const get = (c: Counters, f: BudgetField): number => c[f] ?? 0;

/** Validates a usage delta: known fields, finite, ≥ 0, integral counts. Throws `invalid_arguments`. */
export function parseUsage(value: unknown, field = 'usage'): Usage {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new LibosError('invalid_arguments', `${field}: must be an object of budget fields`, { details: { field } });
  const out: Usage = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(BUDGET_FIELDS as readonly string[]).includes(k))
      throw new LibosError('invalid_arguments', `${field}.${k}: unknown budget field (known: ${BUDGET_FIELDS.join(', ')})`, {
        details: { field: `${field}.${k}` },
      });
    const f = k as BudgetField;
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      throw new LibosError('invalid_arguments', `${field}.${k}: must be a finite number >= 0 (got ${String(v)})`, {
        details: { field: `${field}.${k}` },
      });
    if (!REAL_FIELDS.has(f) && !Number.isInteger(v))
      throw new LibosError('invalid_arguments', `${field}.${k}: must be an integer (got ${v})`, { details: { field: `${field}.${k}` } });
    out[f] = v;
  }
  return out;
}

/** Validates limits: like usage, but null means unlimited. */
export function parseLimits(value: unknown, field = 'limits'): Limits {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new LibosError('invalid_arguments', `${field}: must be an object of budget fields`, { details: { field } });
  const out: Limits = {};
  const finite: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null) {
      if (!(BUDGET_FIELDS as readonly string[]).includes(k))
        throw new LibosError('invalid_arguments', `${field}.${k}: unknown budget field (known: ${BUDGET_FIELDS.join(', ')})`, {
          details: { field: `${field}.${k}` },
        });
      out[k as BudgetField] = null;
    } else finite[k] = v;
  }
  return { ...out, ...parseUsage(finite, field) };
}

/** A snapshot of the accounts a charge touches: the chain and the open children of each chain member. */
export interface TreeState {
  readonly accounts: ReadonlyMap<string, Account>;
  readonly children: ReadonlyMap<string, readonly string[]>;
}

/** The envelope a parent still holds for an open child: limit − usage − reserved (≥ 0), or 0 when unlimited. */
export function held(child: Account, f: BudgetField): number {
  const lim = child.limits[f];
  if (lim === null || lim === undefined || child.status !== 'open') return 0;
  return Math.max(0, lim - get(child.usage, f) - get(child.reserved, f));
}

/** load(X) = usage + subtree provider reservations + envelopes held for open children. */
export function loadOf(state: TreeState, pid: string, f: BudgetField): number {
  const a = state.accounts.get(pid)!;
  let load = get(a.usage, f) + get(a.reserved, f);
  for (const c of state.children.get(pid) ?? []) load += held(state.accounts.get(c)!, f);
  return load;
}

/** remaining(pid,f) = min over pid and ancestors with a limit of max(0, limit − load); null when none limits f. */
export function remainingOf(state: TreeState, pid: string): Record<BudgetField, number | null> {
  const a = state.accounts.get(pid)!;
  const chain = [pid, ...a.ancestors];
  const out = {} as Record<BudgetField, number | null>;
  for (const f of BUDGET_FIELDS) {
    let min: number | null = null;
    for (const m of chain) {
      const lim = state.accounts.get(m)?.limits[f];
      if (lim === null || lim === undefined) continue;
      const r = Math.max(0, lim - loadOf(state, m, f));
      min = min === null ? r : Math.min(min, r);
    }
    out[f] = min;
  }
  return out;
}

const add = (c: Counters, d: Usage, sign: 1 | -1): Counters => {
  const out: Counters = { ...c };
  for (const [k, v] of Object.entries(d)) {
    const f = k as BudgetField;
    const next = get(c, f) + sign * (v ?? 0);
    out[f] = REAL_FIELDS.has(f) ? next : Math.round(next);
  }
  return out;
};

/** Applies a delta to the usage (or reserved) of `pid` and every ancestor; returns the new state. */
export function applyDelta(state: TreeState, pid: string, delta: Usage, column: 'usage' | 'reserved', sign: 1 | -1 = 1): TreeState {
  const a = state.accounts.get(pid)!;
  const accounts = new Map(state.accounts);
  for (const m of [pid, ...a.ancestors]) {
    const acc = accounts.get(m);
    if (!acc) continue;
    accounts.set(m, { ...acc, [column]: add(acc[column], delta, sign) });
  }
  return { accounts, children: state.children };
}

/** One member over its limit after a delta. */
export interface Overrun {
  readonly pid: string;
  readonly field: BudgetField;
  readonly limit: number;
  readonly load: number;
}

/** Members (nearest first) whose load on a field the delta raises now exceeds their limit. */
export function overruns(state: TreeState, pid: string, delta: Usage): Overrun[] {
  const a = state.accounts.get(pid)!;
  const out: Overrun[] = [];
  for (const m of [pid, ...a.ancestors]) {
    const acc = state.accounts.get(m);
    if (!acc) continue;
    for (const [k, v] of Object.entries(delta)) {
      const f = k as BudgetField;
      const lim = acc.limits[f];
      if (!v || lim === null || lim === undefined) continue;
      const load = loadOf(state, m, f);
      if (load > lim) out.push({ pid: m, field: f, limit: lim, load });
    }
  }
  return out;
}
