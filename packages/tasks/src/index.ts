import { definePlugin, type Plugin } from '@libos/sdk';

/**
 * The ObjectTasks plugin (`agent-libos-object-tasks`). Its tools land with the ObjectTasks issue; until then it
 * contributes no Skill and no tool, so base-agent:v0 simply lists none of them.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [tasks()] });
 */
export function tasks(): Plugin {
  return definePlugin({ name: '@libos/tasks', version: '0.1.0', skills: [], tools: [] });
}
