import { LibosError, preparedQuery } from '@libos/sdk';
import { memoOf, readThrough } from '../store/memo-of.js';
import { rowToProcess, type LoadedSkill, type ProcessInfo } from './process-record.js';
import type { KernelStore } from '../store/kernel-database.js';

/**
 * Reads a process or returns null. Through the store memo: the row is read once until a write to `processes`; the
 * returned record is shared and frozen.
 */
export function findProcess(db: KernelStore, pid: string): Promise<ProcessInfo | null> {
  return readThrough(db, ['processes'], `process:${pid}`, async () => {
    const row = (await db.executeQuery(PROCESS_ROW(db, [pid]))).rows[0];
    return row ? frozenProcess(rowToProcess(row)) : null;
  });
}

/** The process row, compiled once per store (read after every write to `processes`). */
const PROCESS_ROW = preparedQuery(1, (db: KernelStore, [pid]) => db.selectFrom('processes').selectAll().where('pid', '=', pid!));

/** A record the memo shares between readers: frozen, with its arrays and maps, so no reader changes another's. */
function frozenProcess(p: ProcessInfo): ProcessInfo {
  Object.freeze(p.toolTable);
  Object.freeze(p.visibleTools);
  Object.freeze(p.loadedSkills);
  if (p.waitState) Object.freeze(p.waitState);
  if (p.outcome) Object.freeze(p.outcome);
  return Object.freeze(p);
}

/**
 * After the caller wrote the process row itself: the record it now holds goes into the store memo (write-through), so
 * the next read is served without reading back the row just written. Returns the record, frozen like a read one.
 */
export function rememberProcess(db: KernelStore, p: ProcessInfo): ProcessInfo {
  const frozen = frozenProcess(p);
  memoOf(db)?.write(`process:${p.pid}`, ['processes'], frozen);
  return frozen;
}

/** Reads a process or throws `process_not_found` naming the pid. */
export async function getProcess(db: KernelStore, pid: string): Promise<ProcessInfo> {
  const p = await findProcess(db, pid);
  if (!p) throw new LibosError('process_not_found', `process ${pid} does not exist`, { details: { pid } });
  return p;
}

export async function listProcesses(db: KernelStore): Promise<ProcessInfo[]> {
  const rows = await db.selectFrom('processes').selectAll().orderBy('created_at').orderBy('pid').execute();
  return rows.map(rowToProcess);
}

/** Pids from `pid` up to its root, `pid` first. */
export async function ancestry(db: KernelStore, pid: string): Promise<string[]> {
  const chain: string[] = [];
  let cur: string | null = pid;
  while (cur) {
    if (chain.includes(cur)) throw new LibosError('internal_error', `process tree has a cycle at ${cur}`);
    chain.push(cur);
    const row: { parent_pid: string | null } | undefined = await db
      .selectFrom('processes')
      .select('parent_pid')
      .where('pid', '=', cur)
      .executeTakeFirst();
    cur = row?.parent_pid ?? null;
  }
  return chain;
}

/**
 * Replaces a process's loaded Skills (and, when given, its callable tool table) under a revision compare-and-swap: a
 * concurrent change makes this fail with `conflict` instead of silently overwriting it.
 */
export async function updateLoadedSkills(
  db: KernelStore,
  p: ProcessInfo,
  loaded: Readonly<Record<string, LoadedSkill>>,
  nowIso: string,
  toolTable?: readonly string[],
): Promise<void> {
  const table = toolTable === undefined ? {} : { tool_table: JSON.stringify(toolTable) };
  const r = await db
    .updateTable('processes')
    .set({ loaded_skills: JSON.stringify(loaded), ...table, revision: p.revision + 1, updated_at: nowIso })
    .where('pid', '=', p.pid)
    .where('revision', '=', p.revision)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1)
    throw new LibosError('conflict', `process ${p.pid} changed concurrently (revision ${p.revision}); retry`);
}
