import { namespaces } from '@libos/sdk';

/**
 * Where a task's result Object lives: the creator's tool-results namespace, so the creator can read it by name.
 *
 * @example
 * resultNamespace('pid_0000000000000001'); // 'process:pid_0000000000000001/tool_results'
 */
export const resultNamespace = (creatorPid: string): string => namespaces.toolResults(creatorPid);

/** The name of a task's result Object in `resultNamespace`: `object_task_result:<task_id>`. */
export const resultName = (taskId: string): string => `object_task_result:${taskId}`;
