/** Bounds of the task manager (docs/behaviour/object-tasks.md); configurable per plugin instance. */
export interface TaskLimits {
  /** Active tasks at once, globally (default 16). */
  readonly maxActive: number;
  /** Active tasks at once on one owner Object (default 4, at most maxActive). */
  readonly maxActivePerOwner: number;
  /** Upper bound of `wait_object_task{timeout_s}` in seconds (default 60). */
  readonly maxWaitSeconds: number;
}

export const DEFAULT_TASK_LIMITS: TaskLimits = { maxActive: 16, maxActivePerOwner: 4, maxWaitSeconds: 60 };

/** The service name under which the plugin observes its runners (`RunnerSpawnRequest.observer`). */
export const TASKS_OBSERVER_SERVICE = 'object_tasks';
