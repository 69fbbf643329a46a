import type { ImageDefinition } from './plugin.js';

/**
 * The images the kernel registers, here so a plugin can start from them without importing `@libos/kernel`:
 *
 * @example
 * // An image of your own: base-agent:v0 with your Skill active from the start.
 * const weatherAgent: ImageDefinition = { ...BASE_AGENT, id: 'weather-agent:v0', defaultSkills: [...BASE_AGENT.defaultSkills, 'weather'] };
 */

/** The kernel's Skill navigation Skill (discover, activate and unload Skills); loaded on every process. */
export const SKILL_NAVIGATION = 'agent-libos-skill-navigation';

/** One Skill's part of a builtin image's callable table. */
export interface BuiltinToolGroup {
  /** The Skill that owns every tool of the group (its plugin defines them). */
  readonly skill: string;
  readonly tools: readonly string[];
}

/**
 * An image declared against plugins that may or may not be loaded, its tools grouped by owning Skill. A group whose
 * Skill is not loaded is left out whole (the host chose not to load that plugin); a loaded Skill that does not define
 * every tool its group names fails `openRuntime`, naming the image and the tool (a table is never narrowed
 * silently). `defaultTools` is the groups' tools in order. An image spread from one of these keeps its groups.
 */
export interface BuiltinImage extends ImageDefinition {
  readonly toolGroups: readonly BuiltinToolGroup[];
}

function builtin(image: Omit<ImageDefinition, 'defaultTools'> & { readonly toolGroups: readonly BuiltinToolGroup[] }): BuiltinImage {
  return { ...image, defaultTools: image.toolGroups.flatMap((g) => g.tools) };
}

/**
 * How the builtin agents keep their LLM context under a model's window: from 80% of it, compact automatically (when
 * the process holds `context:maintenance` execute) in two stages, keeping the four newest entries verbatim.
 */
export const BUILTIN_CONTEXT_MANAGEMENT = Object.freeze({
  mode: 'auto_compact' as const,
  thresholdRatio: 0.8,
  tool: { name: 'compact_process_context', arguments: { max_chunks: 2, preserve_recent_entries: 4 } },
});

const BASE_TOOL_GROUPS: readonly BuiltinToolGroup[] = [
  { skill: SKILL_NAVIGATION, tools: ['discover_skills', 'activate_skill', 'unload_skill'] },
  { skill: 'agent-libos-runtime-session', tools: ['process_exit', 'compact_process_context', 'get_current_time', 'sleep'] },
  { skill: 'agent-libos-human-output', tools: ['human_output'] },
  {
    skill: 'agent-libos-object-memory',
    tools: ['create_memory_namespace', 'list_memory_namespace', 'create_memory_object', 'read_memory_object', 'append_memory_object'],
  },
  {
    skill: 'agent-libos-child-processes',
    tools: [
      'spawn_child_process',
      'fork_child_process',
      'wait_child_process',
      'signal_child_process',
      'send_process_message',
      'receive_process_messages',
      'read_process_messages',
      'ask_human',
    ],
  },
  { skill: 'agent-libos-agent-images', tools: ['exec_process'] },
  {
    skill: 'agent-libos-object-tasks',
    tools: [
      'start_object_task',
      'get_object_task',
      'list_object_tasks',
      'wait_object_task',
      'watch_object_task_owner',
      'cancel_object_task',
    ],
  },
  { skill: 'agent-libos-authority', tools: ['list_capabilities', 'request_permission', 'delegate_capability', 'revoke_capability'] },
];

/**
 * `base-agent:v0`: the default image. Its callable table is exactly its tools (those of the Skills that are loaded);
 * its model-visible table starts with the tools of `defaultSkills`.
 */
export const BASE_AGENT: BuiltinImage = builtin({
  id: 'base-agent:v0',
  description: 'General agent: processes, memory, skills, tasks, human requests and output, and time.',
  systemPrompt:
    'You are an agent process running on libOS. Work toward your goal using only the tools you can see. ' +
    'Visibility is never authority: a tool can still refuse for lack of a capability.',
  promptMode: 'libos_default',
  defaultSkills: [SKILL_NAVIGATION, 'agent-libos-runtime-session'],
  toolGroups: BASE_TOOL_GROUPS,
  contextManagement: BUILTIN_CONTEXT_MANAGEMENT,
});

/**
 * The workspace plugin's Skills (`@libos/workspace`), as the coding agent names them: files and the working
 * directory, commands and test evidence, git. Each call is still checked against `fs:`, `shell:` and `git:` grants.
 */
const WORKSPACE_TOOL_GROUPS: readonly BuiltinToolGroup[] = [
  {
    skill: 'agent-libos-filesystem',
    tools: [
      'get_working_directory',
      'set_working_directory',
      'read_file',
      'write_file',
      'edit_file',
      'list_files',
      'search_files',
      'make_directory',
      'delete_path',
    ],
  },
  { skill: 'agent-libos-shell', tools: ['run_shell_command', 'parse_test_log'] },
  {
    skill: 'agent-libos-git',
    tools: ['git_status', 'git_diff', 'git_log', 'git_show', 'git_add', 'git_commit', 'git_branch', 'git_checkout'],
  },
];

/**
 * `coding-agent:v0`: the base tools plus the workspace tools (files, shell and test evidence, git), whose Skills are
 * active from the start, under the `error_debug` policy; its exit is gated by a cumulative completion review
 * (`metadata.completion_gate`). Without the workspace plugin the image has the base tools only.
 */
export const CODING_AGENT: BuiltinImage = builtin({
  id: 'coding-agent:v0',
  description: 'Coding agent: base tools plus workspace tools; exit is gated by a completion review.',
  systemPrompt:
    'You are a coding agent process on libOS. Change code only through your tools, verify every change, ' +
    'and finish only when the completion review accepts your evidence.',
  promptMode: 'libos_default',
  defaultSkills: [...BASE_AGENT.defaultSkills, ...WORKSPACE_TOOL_GROUPS.map((g) => g.skill)],
  toolGroups: [...BASE_TOOL_GROUPS, ...WORKSPACE_TOOL_GROUPS],
  metadata: { completion_gate: 'cumulative_review', safety_profile: 'error_debug' },
  contextManagement: BUILTIN_CONTEXT_MANAGEMENT,
});

export const BUILTIN_IMAGES: readonly BuiltinImage[] = [BASE_AGENT, CODING_AGENT];
