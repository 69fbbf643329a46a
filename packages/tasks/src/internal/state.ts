import type { TaskLimits } from '../task-limits.js';

export { DEFAULT_TASK_LIMITS, TASKS_OBSERVER_SERVICE, type TaskLimits } from '../task-limits.js';

/** What a task holds only while this runtime lives: never written to its row. */
export interface LiveTask {
  /** The start asked for a result handle for a notification recipient other than the creator. */
  readonly grantResultToNotify: boolean;
}

/** The state one plugin instance shares between its tools, its observer service and its open hook. */
export interface TasksState {
  readonly limits: TaskLimits;
  readonly live: Map<string, LiveTask>;
}
