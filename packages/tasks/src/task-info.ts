import { z } from 'zod';

/** Active statuses (object-tasks seed): the task can still change. */
export const ACTIVE_TASK_STATUSES = ['queued', 'running', 'waiting_human', 'waiting_process', 'waiting_message'] as const;
/** Terminal statuses: the task never changes again (except the rewrites at reopen and restore). */
export const TERMINAL_TASK_STATUSES = [
  'succeeded',
  'failed',
  'cancelled',
  'abandoned',
  'superseded_by_restore',
  'result_unavailable_after_reopen',
] as const;
export const TASK_STATUSES = [...ACTIVE_TASK_STATUSES, ...TERMINAL_TASK_STATUSES] as const;

export type ActiveTaskStatus = (typeof ACTIVE_TASK_STATUSES)[number];
export type TerminalTaskStatus = (typeof TERMINAL_TASK_STATUSES)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_TASK_STATUSES);
export const isActive = (status: string): status is ActiveTaskStatus => ACTIVE.has(status);
export const isTerminal = (status: string): status is TerminalTaskStatus => !ACTIVE.has(status);

/** How a notification is posted: an ordinary message, or one that stops the recipient's next non-message tool call. */
export const NOTIFY_KINDS = ['normal', 'interrupt'] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];
/** Owner changes a watching runner can be told about. */
export const WATCH_EVENTS = ['updated', 'linked'] as const;
export type WatchEvent = (typeof WATCH_EVENTS)[number];

export const NOTIFICATION_STATUSES = ['none', 'delivered', 'failed', 'undelivered_terminal'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** Where and how the terminal notification goes, and what became of it. */
export interface Notification {
  readonly recipient_pid: string | null;
  readonly kind: NotifyKind;
  readonly channel: string;
  readonly subject: string | null;
  readonly message_id: string | null;
  readonly status: NotificationStatus;
  readonly error: string | null;
}

export interface OwnerWatch {
  readonly enabled: boolean;
  readonly events: WatchEvent[];
  readonly kind: NotifyKind;
  readonly channel: string;
}

/**
 * Everything durable about a task, exactly the keys a tool returns (docs/behaviour/object-tasks.md). Arguments, delegations
 * and the result-grant intent are never part of it; result content is never inlined.
 */
export const taskInfoSchema = z
  .object({
    task_id: z.string(),
    owner_oid: z.string(),
    creator_pid: z.string(),
    runner_pid: z.string().nullable(),
    tool: z.string(),
    tool_id: z.string().nullable(),
    status: z.enum(TASK_STATUSES),
    result_oid: z.string().nullable(),
    error: z.string().nullable(),
    wait: z.record(z.string(), z.unknown()),
    notification: z
      .object({
        recipient_pid: z.string().nullable(),
        kind: z.enum(NOTIFY_KINDS),
        channel: z.string(),
        subject: z.string().nullable(),
        message_id: z.string().nullable(),
        status: z.enum(NOTIFICATION_STATUSES),
        error: z.string().nullable(),
      })
      .strict(),
    owner_watch: z
      .object({ enabled: z.boolean(), events: z.array(z.enum(WATCH_EVENTS)), kind: z.enum(NOTIFY_KINDS), channel: z.string() })
      .strict(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
  })
  .strict();

export type TaskInfo = z.infer<typeof taskInfoSchema>;

/** Default channels and the longest channel name. */
export const DEFAULT_NOTIFY_CHANNEL = 'object-task';
export const DEFAULT_WATCH_CHANNEL = 'object-task-owner';
export const MAX_CHANNEL_CHARS = 128;
