import { flushAppends } from '../store/append-buffer.js';
import type { KernelStore } from '../store/kernel-database.js';

const TOOL_TARGET = 'tool:';

/**
 * Tools a process called successfully: the targets of its `tool.call` audit rows with decision `ok`, each name once,
 * in first-seen order, without `exclude` (e.g. `process_exit`). A failed or parked call is never listed.
 *
 * @example
 * await observedSuccessfulTools(db, pid, ['process_exit']); // ['list_memory_namespace', 'get_current_time']
 */
export async function observedSuccessfulTools(db: KernelStore, pid: string, exclude: readonly string[] = []): Promise<string[]> {
  await flushAppends(db);
  const rows = await db
    .selectFrom('audit_records')
    .select(['target', (eb) => eb.fn.min('seq').as('first_seq')])
    .where('actor', '=', pid)
    .where('action', '=', 'tool.call')
    .where('decision', '=', 'ok')
    .groupBy('target')
    .orderBy('first_seq')
    .execute();
  const skip = new Set(exclude);
  const names: string[] = [];
  for (const r of rows) {
    const target = r.target;
    if (target === null || !target.startsWith(TOOL_TARGET)) continue;
    const name = target.slice(TOOL_TARGET.length);
    if (!skip.has(name)) names.push(name);
  }
  return names;
}
