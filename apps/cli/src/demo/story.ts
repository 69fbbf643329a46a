import type { LlmScript } from '@libos/kernel';
import type { Right } from '@libos/sdk';
import { resources } from '@libos/sdk';

const CHILD_SKILL = 'agent-libos-child-processes';
const MEMORY_SKILL = 'agent-libos-object-memory';

/** The demo's fixed inputs. */
export const STORY = {
  parentGoal: 'Coordinate a survey: start a worker, hear its report, reply, and wait for it to finish',
  workerGoal: 'Survey the region the owner picks and report to your parent',
  question: 'Which region should I survey?',
  answer: 'the north coast',
  reply: { text: 'Thanks; wrap up.' },
  /** A namespace the parent may see the tool for but holds no right on. */
  forbiddenNamespace: 'team/notes',
} as const;

/** What the host grants the parent before it runs. Delegable ones may be passed on, exactly, to the worker. */
export const PARENT_GRANTS: readonly { readonly resource: string; readonly rights: readonly Right[]; readonly delegable: boolean }[] = [
  { resource: 'skill:*', rights: ['execute'], delegable: true },
  { resource: 'process:spawn', rights: ['write'], delegable: false },
  { resource: 'human:owner', rights: ['write'], delegable: true },
];

/** What the worker inherits at spawn (exact specs, each covered by a delegable grant of the parent). */
export const WORKER_INHERITS = [
  { resource: resources.skill(CHILD_SKILL), rights: ['execute'] },
  { resource: 'human:owner', rights: ['write'] },
];

/**
 * The scripted model: the parent's turns under its pid, the worker's under `"*"` (any other pid). `{{child}}` and
 * `{{answer}}` are what the model learned from earlier results (see `BoundScriptedProvider`).
 */
export function storyScript(parentPid: string): LlmScript {
  return {
    processes: {
      [parentPid]: [
        [
          { tool: 'activate_skill', args: { skill_id: CHILD_SKILL } },
          { tool: 'activate_skill', args: { skill_id: MEMORY_SKILL } },
        ],
        [{ tool: 'create_memory_namespace', args: { namespace: STORY.forbiddenNamespace } }],
        [{ tool: 'spawn_child_process', args: { goal: STORY.workerGoal, inherit_capabilities: WORKER_INHERITS } }],
        [{ tool: 'receive_process_messages', args: { sender_pid: '{{child}}', block: true } }],
        [{ tool: 'send_process_message', args: { to_pid: '{{child}}', payload: STORY.reply } }],
        [{ tool: 'wait_child_process', args: { child_pid: '{{child}}' } }],
        [{ tool: 'process_exit', args: { payload: { summary: 'the worker surveyed {{answer}} and found 3 sites' } } }],
      ],
      '*': [
        [{ tool: 'activate_skill', args: { skill_id: CHILD_SKILL } }],
        [{ tool: 'ask_human', args: { question: STORY.question } }],
        [{ tool: 'send_process_message', args: { to_pid: parentPid, payload: { region: '{{answer}}', sites: 3 } } }],
        [{ tool: 'receive_process_messages', args: { sender_pid: parentPid, block: true } }],
        [{ tool: 'process_exit', args: { payload: { region: '{{answer}}', sites: 3 } } }],
      ],
    },
  };
}
