import { definePlugin, SERVICE_NAMES, skillFromFile, type Plugin } from '@libos/sdk';
import { cancelActiveTasks, pinnedOwners } from './internal/shutdown.js';
import { tasksState } from './internal/subtree-state.js';
import { taskLifecycle } from './internal/lifecycle.js';
import { notifyOwnerChange } from './internal/owner-watch.js';
import { sweepTasksAfterReopen, sweepTasksOfTree } from './internal/reopen.js';
import { DEFAULT_TASK_LIMITS, TASKS_OBSERVER_SERVICE, type TaskLimits, type TasksState } from './internal/state.js';
import { migrations } from './internal/task-store.js';
import { OBJECT_TASKS_SKILL_URL } from './skill-files.js';
import { cancelObjectTask } from './tools/cancel-object-task.js';
import { getObjectTask } from './tools/get-object-task.js';
import { listObjectTasks } from './tools/list-object-tasks.js';
import { startObjectTask } from './tools/start-object-task.js';
import { waitObjectTask } from './tools/wait-object-task.js';
import { watchObjectTaskOwner } from './tools/watch-object-task-owner.js';
import { VERSION } from './version.js';

export interface TasksOptions {
  /** Capacity and wait bounds (defaults: 16 active, 4 per owner, 60 s). */
  readonly limits?: Partial<TaskLimits>;
}

/**
 * The ObjectTasks plugin (`agent-libos-object-tasks`): the six task tools, the `object_tasks` table, the runner
 * observer (service `object_tasks`, called by the kernel inside a runner's call transaction), owner-watch notices
 * (on Object Memory's `object_appended` and `object_linked` events), owner pins (service `object_pins`), its share of
 * checkpoints (`subtreeState`), the reopen sweep and the shutdown cancel.
 * It reaches the kernel only through the sdk's `runners`, `processes`, `mailbox` and `objects` services.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), tasks(), session()] });
 */
export function tasks(options: TasksOptions = {}): Plugin {
  const limits: TaskLimits = { ...DEFAULT_TASK_LIMITS, ...(options.limits ?? {}) };
  if (!Number.isInteger(limits.maxActive) || limits.maxActive < 1)
    throw new TypeError('tasks: limits.maxActive must be a positive integer');
  if (!Number.isInteger(limits.maxActivePerOwner) || limits.maxActivePerOwner < 1 || limits.maxActivePerOwner > limits.maxActive) {
    throw new TypeError('tasks: limits.maxActivePerOwner must be a positive integer no larger than limits.maxActive');
  }
  if (!(limits.maxWaitSeconds > 0 && Number.isFinite(limits.maxWaitSeconds)))
    throw new TypeError('tasks: limits.maxWaitSeconds must be a positive number');
  const state: TasksState = { limits, live: new Map() };
  return definePlugin({
    name: '@libos/tasks',
    version: VERSION,
    skills: [skillFromFile(OBJECT_TASKS_SKILL_URL)],
    tools: [
      startObjectTask(state),
      getObjectTask(state),
      listObjectTasks(state),
      waitObjectTask(state),
      watchObjectTaskOwner(state),
      cancelObjectTask(state),
    ],
    migrations,
    services: {
      [TASKS_OBSERVER_SERVICE]: (scope) => taskLifecycle(scope, state).observer,
      // An active task pins its owner: Object Memory keeps it past its owner process's end.
      [SERVICE_NAMES.objectPins]: (scope) => ({ pinned: (oids: readonly string[]) => pinnedOwners(scope, oids) }),
    },
    subtreeState: tasksState(),
    hooks: {
      async open(scope) {
        await sweepTasksAfterReopen(scope, state);
      },
      // One host of many took over a tree from a host that stopped: its active tasks' runners were on that host.
      async recoverTree(scope, tree) {
        await sweepTasksOfTree(scope, state, tree.pids);
      },
      // Owner watch: Object Memory's change events reach the runners watching that owner, in the same transaction.
      events: {
        object_appended: (scope, event) => notifyOwnerChange(scope, state, event),
        object_linked: (scope, event) => notifyOwnerChange(scope, state, event),
      },
      // Shutdown: every active task is cancelled ("runtime shutdown"); its runner ends with it.
      async close(scope) {
        await cancelActiveTasks(scope, state, 'runtime shutdown');
      },
    },
  });
}
