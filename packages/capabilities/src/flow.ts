import { DEFAULT_LABELS, joinLabels, type DataLabels, type FlowContext, type ServiceScope } from '@libos/sdk';
import { LibosError, preparedQuery } from '@libos/sdk';
import { parseLabels } from './data-labels.js';
import { audit, type EngineEnv } from './internal/env.js';
import { T, dbOf, parseJsonColumn, readThrough, writeThrough, type Db } from './internal/store.js';

/** FlowContext of one call plus a snapshot of the process high-water. */
export interface ProcessFlow extends FlowContext {
  /** The process high-water label and every source it ever observed (sorted). */
  snapshot(): Promise<{ readonly labels: DataLabels; readonly sources: readonly string[] }>;
}

interface LabelRow {
  pid: string;
  labels: string;
}

/** A process's high-water: its label and every source it ever observed (sorted, unique). */
export interface HighWater {
  readonly labels: DataLabels;
  readonly sources: readonly string[];
  /** Whether the label row is stored (a process that observed nothing has none). */
  readonly exists: boolean;
}

/** A pid's high-water label and its sources, compiled once per store (every process's first turn asks). */
const LABELS_OF = preparedQuery(1, (db: Db, [pid]) => db.selectFrom(T.labels).select(['pid', 'labels']).where('pid', '=', pid));
const SOURCES_OF = preparedQuery(1, (db: Db, [pid]) => db.selectFrom(T.sources).select('oid').where('pid', '=', pid));

const NO_SOURCES: readonly string[] = Object.freeze([]);

/** Loads the high-water of a pid (defaults when it has observed nothing). */
export async function loadHighWater(db: Db, pid: string): Promise<HighWater> {
  const label = await readThrough(db, [T.labels], `labels:${pid}`, async () => {
    const row = (await db.executeQuery(LABELS_OF(db, [pid]))).rows[0] as LabelRow | undefined;
    return row ? Object.freeze(parseJsonColumn<DataLabels>(row.labels, 'cap_process_labels.labels')) : null;
  });
  const sources = await readThrough(db, [T.sources], `sources:${pid}`, async () => {
    const rows = (await db.executeQuery(SOURCES_OF(db, [pid]))).rows as { oid: string }[];
    // Sorted here, not by the store: PostgreSQL orders text by its collation, JavaScript by code unit.
    return rows.length === 0 ? NO_SOURCES : Object.freeze(rows.map((r) => r.oid).sort());
  });
  return { labels: label ?? DEFAULT_LABELS, sources, exists: label !== null };
}

/** A high-water label's update and first insert, compiled once per store (a read of labelled data raises it). */
const UPDATE_HIGH_WATER = preparedQuery(3, (db: Db, [labels, at, pid]) =>
  db.updateTable(T.labels).set({ labels, updated_at: at }).where('pid', '=', pid),
);
const INSERT_HIGH_WATER = preparedQuery(3, (db: Db, [labels, at, pid]) => db.insertInto(T.labels).values({ pid, labels, updated_at: at }));
/** One observed source; already-stored ones are kept as they are. */
const INSERT_SOURCE = preparedQuery(2, (db: Db, [pid, oid]) =>
  db
    .insertInto(T.sources)
    .values({ pid, oid })
    .onConflict((oc) => oc.columns(['pid', 'oid']).doNothing()),
);

/** Writes a high-water label (insert or update). */
export async function storeHighWater(db: Db, pid: string, labels: DataLabels, nowIso: string, exists: boolean): Promise<void> {
  await db.executeQuery((exists ? UPDATE_HIGH_WATER : INSERT_HIGH_WATER)(db, [JSON.stringify(labels), nowIso, pid]));
  writeThrough(db, [T.labels], `labels:${pid}`, Object.freeze({ ...labels }));
}

/**
 * Adds `fresh` (sorted, none of them in `before`) to the sources of `pid`: one row each, so the cost of a new source
 * does not grow with the ones before it. Returns the whole sorted list.
 */
export async function addSources(db: Db, pid: string, before: readonly string[], fresh: readonly string[]): Promise<readonly string[]> {
  for (const oid of fresh) await db.executeQuery(INSERT_SOURCE(db, [pid, oid]));
  const after = Object.freeze(mergeSorted(before, fresh));
  writeThrough(db, [T.sources], `sources:${pid}`, after);
  return after;
}

/** Whether sorted `list` holds `value` (binary search). */
function holds(list: readonly string[], value: string): boolean {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = list[mid]!;
    if (at === value) return true;
    if (at < value) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/** The values of `candidates` that sorted `list` lacks, sorted and unique. */
function missing(list: readonly string[], candidates: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const c of candidates) if (!holds(list, c)) out.add(c);
  return [...out].sort();
}

/** Merges two sorted lists of distinct values into one. */
function mergeSorted(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(a[i]! < b[j]! ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

class ProcessFlowImpl implements ProcessFlow {
  readonly #callSources = new Set<string>();
  #processSources: readonly string[] = [];

  constructor(
    private readonly env: EngineEnv,
    private readonly scope: ServiceScope,
    private readonly db: Db,
    private readonly pid: string,
  ) {}

  async labels(): Promise<DataLabels> {
    const hw = await loadHighWater(this.db, this.pid);
    this.#processSources = hw.sources;
    return hw.labels;
  }

  sources(): readonly string[] {
    const extra = missing(this.#processSources, this.#callSources);
    return extra.length === 0 ? this.#processSources : mergeSorted(this.#processSources, extra);
  }

  async snapshot(): Promise<{ readonly labels: DataLabels; readonly sources: readonly string[] }> {
    const hw = await loadHighWater(this.db, this.pid);
    this.#processSources = hw.sources;
    return { labels: hw.labels, sources: this.sources() };
  }

  async taint(labels: Partial<DataLabels>, sourceOids: readonly string[] = []): Promise<void> {
    const observed = parseLabels(labels, { allowMixed: true });
    if (!Array.isArray(sourceOids) || sourceOids.some((o) => typeof o !== 'string' || o.length === 0 || o.length > 256)) {
      throw new LibosError('invalid_arguments', 'sourceOids: must be an array of non-empty ids', { details: { field: 'sourceOids' } });
    }
    const hw = await loadHighWater(this.db, this.pid);
    const next = joinLabels([hw.labels, observed]);
    const fresh = missing(hw.sources, sourceOids);
    for (const o of sourceOids) this.#callSources.add(o);
    this.#processSources = hw.sources;
    const raised = !hw.exists || JSON.stringify(next) !== JSON.stringify(hw.labels);
    if (!raised && fresh.length === 0) return;
    const at = this.env.clock.now().toISOString();
    if (raised) await storeHighWater(this.db, this.pid, next, at, hw.exists);
    if (fresh.length > 0) this.#processSources = await addSources(this.db, this.pid, hw.sources, fresh);
    const sources = this.#processSources;
    await audit(this.scope, 'data_flow.taint', this.pid, 'raised', {
      pid: this.pid,
      labels: next,
      sourceOids,
      sourceCount: sources.length,
    });
  }
}

/** The FlowContext of `pid` for one call: labels never go down; taint raises the durable high-water. */
export function processFlow(env: EngineEnv, scope: ServiceScope, pid: string): ProcessFlow {
  return new ProcessFlowImpl(env, scope, dbOf(scope), pid);
}
