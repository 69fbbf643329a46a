/**
 * Blocking tools park their process in a typed wait instead of sleeping: the tool calls `ctx.wait(spec)`, the
 * broker commits the wait state and a durable pending action in the call's transaction, and the scheduler
 * re-runs the saved call (with `ctx.resumed === true`) when the wait is satisfied, without asking the model again.
 *
 * @example
 * import { isTerminalProcessStatus, type ProcessStatus } from '@libos/sdk';
 * declare const child: { readonly pid: string; readonly status: ProcessStatus }, block: boolean;
 * if (!isTerminalProcessStatus(child.status) && block) ctx.wait({ kind: 'child', child_pid: child.pid });
 */
export interface MessageFilters {
  readonly sender_pid?: string;
  readonly channel?: string;
  readonly kind?: string;
  readonly message_ids?: readonly string[];
}

export type WaitSpec =
  | { readonly kind: 'child'; readonly child_pid: string }
  | { readonly kind: 'message'; readonly filters: MessageFilters }
  | { readonly kind: 'human'; readonly request_ids: readonly string[] }
  /**
   * Waits for an ObjectTask to leave `queued`/`running` (it settled, or its runner waits on something). The plugin
   * that owns the task wakes it (`RunnerService.wakeTaskWaiters`); when `deadline` (ISO-8601) is set, an idle
   * scheduler wakes it at that time at the latest. The saved call then re-runs and reports what it finds.
   */
  | { readonly kind: 'task'; readonly task_id: string; readonly deadline?: string }
  /**
   * One known delay (`sleep`): only the clock reaching `deadline` (ISO-8601) ends it, never a child, message or task.
   * `started_at` is when timing began, so the resumed call can report the measured elapsed time.
   */
  | { readonly kind: 'timer'; readonly started_at: string; readonly deadline: string };

/**
 * What a saved call waits for: a tool's wait, or, for a runner's call saved at its birth (never run yet), the
 * operation it will run.
 */
export type SavedCallWait = WaitSpec | { readonly kind: 'tool'; readonly operation_id: string };

/** Thrown by `ctx.wait`; the broker turns it into a committed wait. Never thrown across a tool boundary otherwise. */
/** How a call parks (`ToolContext.wait`'s options). */
export interface WaitOptions {
  /**
   * The arguments the saved call re-runs with, instead of the ones it was called with (e.g. the progress of a
   * multi-stage call). They are saved durably with the wait and are validated against the tool's input again.
   */
  readonly resumeArgs?: Readonly<Record<string, unknown>>;
}

export class ToolWait {
  readonly wait: WaitSpec;
  readonly resumeArgs: Readonly<Record<string, unknown>> | undefined;
  constructor(wait: WaitSpec, opts: WaitOptions = {}) {
    this.wait = Object.freeze({ ...wait });
    this.resumeArgs = opts.resumeArgs;
  }
}

export function isToolWait(value: unknown): value is ToolWait {
  return (
    value instanceof ToolWait || (typeof value === 'object' && value !== null && value.constructor?.name === 'ToolWait' && 'wait' in value)
  );
}
