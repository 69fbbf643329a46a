/**
 * The process vocabulary every package shares (docs/behaviour/kernel.md): the statuses of an AgentProcess and the
 * sets the kernel and plugins test them against. Declared here once; the kernel and the plugins import it.
 *
 * @example
 * import { isTerminalProcessStatus } from '@libos/sdk';
 * declare const child: { readonly status: ProcessStatus; readonly outcome: unknown };
 * if (isTerminalProcessStatus(child.status)) console.log(child.outcome);
 */
export const PROCESS_STATUSES = [
  'created',
  'runnable',
  'running',
  'waiting_event',
  'waiting_tool',
  'waiting_human',
  'paused',
  'suspended',
  'exited',
  'failed',
  'killed',
] as const;

/** One status of an AgentProcess. */
export type ProcessStatus = (typeof PROCESS_STATUSES)[number];

/** The statuses a process never leaves: it ended (`process_exited`), by its own exit, a failure or a kill. */
export type TerminalProcessStatus = 'exited' | 'failed' | 'killed';

/** The terminal process statuses as a set (task statuses have their own, `TERMINAL_TASK_STATUSES` in `@libos/tasks`). */
export const TERMINAL_PROCESS_STATUSES: ReadonlySet<ProcessStatus> = new Set<TerminalProcessStatus>(['exited', 'failed', 'killed']);

/** Statuses in which a process may call tools. */
export const TOOL_CALLABLE_STATUSES: ReadonlySet<ProcessStatus> = new Set<ProcessStatus>(['runnable', 'running']);

/**
 * True when `status` is a terminal process status. Accepts any string (a row read from the store, a summary's
 * `status`), so a caller need not cast first.
 *
 * @example
 * isTerminalProcessStatus('killed');  // true
 * isTerminalProcessStatus('waiting_tool'); // false
 */
export function isTerminalProcessStatus(status: string | null | undefined): status is TerminalProcessStatus {
  return typeof status === 'string' && TERMINAL_PROCESS_STATUSES.has(status as ProcessStatus);
}
