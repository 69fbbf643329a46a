import type { ImageDefinition } from '@libos/sdk';

export const SKILL_NAVIGATION = 'agent-libos-skill-navigation';

/**
 * `base-agent:v0`: the default image. Its callable table is exactly `defaultTools` (narrowed to the tools the
 * loaded plugins define); its model-visible table starts with the tools of `defaultSkills`.
 */
export const BASE_AGENT: ImageDefinition = {
  id: 'base-agent:v0',
  description: 'General agent: processes, memory, skills, tasks, human requests and time.',
  systemPrompt: 'You are an agent process running on libOS. Work toward your goal using only the tools you can see. Visibility is never authority: a tool can still refuse for lack of a capability.',
  promptMode: 'libos_default',
  defaultSkills: [SKILL_NAVIGATION, 'agent-libos-runtime-session'],
  defaultTools: [
    // skill navigation
    'discover_skills',
    'activate_skill',
    'unload_skill',
    // runtime session
    'process_exit',
    'compact_process_context',
    'get_current_time',
    'sleep',
    // object memory
    'create_memory_namespace',
    'list_memory_namespace',
    'create_memory_object',
    'read_memory_object',
    'append_memory_object',
    // child processes and mailbox
    'spawn_child_process',
    'fork_child_process',
    'wait_child_process',
    'signal_child_process',
    'send_process_message',
    'receive_process_messages',
    'read_process_messages',
    'ask_human',
    // images
    'exec_process',
    // object tasks
    'start_object_task',
    'get_object_task',
    'list_object_tasks',
    'wait_object_task',
    'watch_object_task_owner',
    'cancel_object_task',
    // authority
    'list_capabilities',
    'request_permission',
    'delegate_capability',
    'revoke_capability',
  ],
};

/**
 * `coding-agent:v0`: the base tools (filesystem, git and shell tools join when their plugins exist) under the
 * `error_debug` policy; its exit is gated by a cumulative completion review (`metadata.completion_gate`).
 */
export const CODING_AGENT: ImageDefinition = {
  id: 'coding-agent:v0',
  description: 'Coding agent: base tools plus workspace tools; exit is gated by a completion review.',
  systemPrompt:
    'You are a coding agent process on libOS. Change code only through your tools, verify every change, and finish only when the completion review accepts your evidence.',
  promptMode: 'libos_default',
  defaultSkills: BASE_AGENT.defaultSkills,
  defaultTools: [...BASE_AGENT.defaultTools, 'read_file', 'write_file', 'list_files', 'run_shell', 'git_status', 'git_diff', 'parse_pytest_log'],
  metadata: { completion_gate: 'cumulative_review', safety_profile: 'error_debug' },
};

export const BUILTIN_IMAGES: readonly ImageDefinition[] = [BASE_AGENT, CODING_AGENT];
