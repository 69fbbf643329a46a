import { DEFAULT_LABELS, joinLabels, type DataLabels, type FlowContext, type ServiceScope } from '@libos/sdk';
import { LibosError, preparedQuery } from '@libos/sdk';
import { parseLabels } from './data-labels.js';
import { audit, type EngineEnv } from './internal/env.js';
import { T, dbOf, parseJsonColumn, readThrough, type Db } from './internal/store.js';

/** FlowContext of one call plus a snapshot of the process high-water. */
export interface ProcessFlow extends FlowContext {
  /** The process high-water label and every source it ever observed (sorted). */
  snapshot(): Promise<{ readonly labels: DataLabels; readonly sources: readonly string[] }>;
}

interface LabelRow {
  pid: string;
  labels: string;
  sources: string;
}

/** A pid's high-water row, compiled once per store (every process's first turn asks). */
const LABELS_OF = preparedQuery(1, (db: Db, [pid]) => db.selectFrom(T.labels).selectAll().where('pid', '=', pid));

/** Loads the high-water of a pid (defaults when it has observed nothing). */
export function loadHighWater(db: Db, pid: string): Promise<{ labels: DataLabels; sources: string[]; exists: boolean }> {
  return readThrough(db, [T.labels], `labels:${pid}`, async () => {
    const row = (await db.executeQuery(LABELS_OF(db, [pid]))).rows[0] as LabelRow | undefined;
    if (!row) return Object.freeze({ labels: DEFAULT_LABELS, sources: [], exists: false });
    const labels = parseJsonColumn<DataLabels>(row.labels, 'cap_process_labels.labels');
    const sources = parseJsonColumn<string[]>(row.sources, 'cap_process_labels.sources');
    // Shared through the store memo: frozen, so no reader changes what the next one reads.
    return Object.freeze({ labels: Object.freeze(labels), sources: Object.freeze(sources) as string[], exists: true });
  });
}

/** A high-water's update and first insert, compiled once per store (a read of labelled data raises it). */
const UPDATE_HIGH_WATER = preparedQuery(4, (db: Db, [labels, sources, at, pid]) =>
  db.updateTable(T.labels).set({ labels, sources, updated_at: at }).where('pid', '=', pid),
);
const INSERT_HIGH_WATER = preparedQuery(4, (db: Db, [labels, sources, at, pid]) =>
  db.insertInto(T.labels).values({ pid, labels, sources, updated_at: at }),
);

/** Writes a high-water (insert or update). */
export async function storeHighWater(
  db: Db,
  pid: string,
  labels: DataLabels,
  sources: readonly string[],
  nowIso: string,
  exists: boolean,
): Promise<void> {
  const args = [JSON.stringify(labels), JSON.stringify(sources), nowIso, pid];
  await db.executeQuery((exists ? UPDATE_HIGH_WATER : INSERT_HIGH_WATER)(db, args));
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
    return [...new Set([...this.#processSources, ...this.#callSources])].sort();
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
    const sources = [...new Set([...hw.sources, ...sourceOids])].sort();
    for (const o of sourceOids) this.#callSources.add(o);
    this.#processSources = sources;
    if (hw.exists && JSON.stringify(next) === JSON.stringify(hw.labels) && sources.length === hw.sources.length) return;
    await storeHighWater(this.db, this.pid, next, sources, this.env.clock.now().toISOString(), hw.exists);
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
