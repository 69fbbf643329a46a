export { tasks, type TasksOptions } from './plugin.js';
export {
  ACTIVE_TASK_STATUSES,
  TERMINAL_TASK_STATUSES,
  TASK_STATUSES,
  NOTIFY_KINDS,
  WATCH_EVENTS,
  NOTIFICATION_STATUSES,
  DEFAULT_NOTIFY_CHANNEL,
  DEFAULT_WATCH_CHANNEL,
  taskInfoSchema,
  type TaskInfo,
  type TaskStatus,
  type ActiveTaskStatus,
  type TerminalTaskStatus,
  type Notification,
  type OwnerWatch,
} from './task-info.js';
export { DEFAULT_TASK_LIMITS, TASKS_OBSERVER_SERVICE, type TaskLimits } from './task-limits.js';
export { resultName, resultNamespace } from './result-names.js';
