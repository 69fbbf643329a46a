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

/** What a task holds only while this runtime lives: never written to its row. */
export interface LiveTask {
  /** The start asked for a result handle for a notification recipient other than the creator. */
  readonly grantResultToNotify: boolean;
}

/** Fault-injection seams for tests. */
export interface TaskTestHooks {
  /** Called before a terminal notification is posted; a throw makes that post fail (it is retried later). */
  beforeNotify?(task: { readonly task_id: string; readonly status: string }): void;
}

/** The state one plugin instance shares between its tools, its observer service and its open hook. */
export interface TasksState {
  readonly limits: TaskLimits;
  readonly live: Map<string, LiveTask>;
  readonly testHooks: TaskTestHooks;
}

/** The service name under which the plugin observes its runners (`RunnerSpawnRequest.observer`). */
export const TASKS_OBSERVER_SERVICE = 'object_tasks';
