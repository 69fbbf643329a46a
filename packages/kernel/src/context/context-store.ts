import type { Selectable } from 'kysely';
import { DEFAULT_LABELS, newId, type DataLabels, type Migration } from '@libos/sdk';
import type { KernelStore, LlmContextsTable } from '../store/kernel-database.js';
import { migrationStore } from '../store/kernel-scope.js';

/**
 * The durable half of each process's LLM context (table `llm_contexts`): its generation, its label high-water, the
 * oid of its current Object and the state of its pressure episode. The Object's payload is runtime-local and is lost
 * on a reopen; this row is not, so a reopened context keeps its generation and never starts below its labels.
 */
export const llmContextMigrations: readonly Migration[] = [
  {
    name: '0001_llm_contexts',
    async up(raw, kit) {
      const db = migrationStore(raw);
      const t = kit.types;
      await db.schema
        .createTable('llm_contexts')
        .addColumn('pid', t.id, (c) => c.primaryKey())
        .addColumn('generation', 'text', (c) => c.notNull())
        .addColumn('oid', t.id)
        .addColumn('labels', t.json, (c) => c.notNull())
        .addColumn('pressure', t.json, (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
    },
  },
];

/** The migration set's owner name (its own set, so the kernel's core schema is untouched). */
export const LLM_CONTEXT_MIGRATIONS_OWNER = '@libos/kernel:llm-context';

/** Where a pressure episode stands: whether the last projection was over the threshold, and what was tried in it. */
export interface PressureState {
  /** True while the projected prompt stays at or over the threshold. */
  readonly active: boolean;
  /** The policy fingerprint maintenance was attempted under in this episode, or null. */
  readonly attempted: string | null;
}

export interface ContextRow {
  readonly pid: string;
  readonly generation: string;
  readonly oid: string | null;
  readonly labels: DataLabels;
  readonly pressure: PressureState;
}

const fromRow = (r: Selectable<LlmContextsTable>): ContextRow => ({
  pid: r.pid,
  generation: r.generation,
  oid: r.oid,
  labels: { ...DEFAULT_LABELS, ...(JSON.parse(r.labels) as DataLabels) },
  pressure: JSON.parse(r.pressure) as PressureState,
});

/** A new opaque generation. */
export const newGeneration = (): string => newId('ctxgen');

export async function findContextRow(db: KernelStore, pid: string): Promise<ContextRow | null> {
  const r = await db.selectFrom('llm_contexts').selectAll().where('pid', '=', pid).executeTakeFirst();
  return r ? fromRow(r) : null;
}

/** The pid's row, created (a fresh generation, the given labels) when it has none. */
export async function ensureContextRow(db: KernelStore, pid: string, labels: DataLabels, nowIso: string): Promise<ContextRow> {
  const found = await findContextRow(db, pid);
  if (found) return found;
  const row: ContextRow = { pid, generation: newGeneration(), oid: null, labels, pressure: { active: false, attempted: null } };
  await db
    .insertInto('llm_contexts')
    .values({
      pid,
      generation: row.generation,
      oid: null,
      labels: JSON.stringify(labels),
      pressure: JSON.stringify(row.pressure),
      created_at: nowIso,
      updated_at: nowIso,
    })
    .execute();
  return row;
}

/** Updates some fields of the pid's row (which must exist). */
export async function updateContextRow(
  db: KernelStore,
  pid: string,
  set: { readonly generation?: string; readonly oid?: string | null; readonly labels?: DataLabels; readonly pressure?: PressureState },
  nowIso: string,
): Promise<void> {
  await db
    .updateTable('llm_contexts')
    .set({
      ...(set.generation !== undefined ? { generation: set.generation } : {}),
      ...(set.oid !== undefined ? { oid: set.oid } : {}),
      ...(set.labels !== undefined ? { labels: JSON.stringify(set.labels) } : {}),
      ...(set.pressure !== undefined ? { pressure: JSON.stringify(set.pressure) } : {}),
      updated_at: nowIso,
    })
    .where('pid', '=', pid)
    .execute();
}
