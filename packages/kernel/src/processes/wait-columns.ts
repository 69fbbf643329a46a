/** The indexed columns that mirror a process's wait (`processes.wait_state`). */
export interface WaitColumns {
  readonly wait_kind: string | null;
  readonly wait_deadline: string | null;
}

/**
 * The `wait_kind` and `wait_deadline` columns of a process in `wait` (both null when it does not wait). The deadline
 * of a timer or task wait is normalised to `toISOString` form, so that text order is time order and due waits are
 * found by an index range (`wait_deadline <= now`).
 *
 * @example
 * waitColumns({ kind: 'timer', started_at: '2026-01-01T00:00:00Z', deadline: '2026-01-01T00:00:05Z' });
 * // { wait_kind: 'timer', wait_deadline: '2026-01-01T00:00:05.000Z' }
 */
export function waitColumns(wait: Readonly<Record<string, unknown>> | null): WaitColumns {
  if (wait === null) return { wait_kind: null, wait_deadline: null };
  const kind = typeof wait.kind === 'string' ? wait.kind : null;
  const at = typeof wait.deadline === 'string' ? Date.parse(wait.deadline) : Number.NaN;
  return { wait_kind: kind, wait_deadline: Number.isNaN(at) ? null : new Date(at).toISOString() };
}
