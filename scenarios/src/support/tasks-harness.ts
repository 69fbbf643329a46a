import { capabilities } from '@libos/capabilities';
import { openRuntime, type HostOptions, type LlmProvider, type RunReport, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { definePlugin, defineTool, LibosError, sequentialIds, skillFromText, z, type Plugin } from '@libos/sdk';
import { session } from '@libos/session';
import { tasks, type TasksOptions } from '@libos/tasks';
import type { Json } from './kernel-harness.js';
import type { StorePlugin } from './store-faults.js';

/**
 * Harness of the ObjectTasks scenarios: the real kernel over SQLite with capabilities, Object Memory, ObjectTasks
 * and session, sequential ids, and a `task-targets` plugin whose tools record every run (so a test can prove a
 * target ran, or never ran) plus an image that sees the task, memory, mailbox and target tools from the start.
 */

export const TASKS_SKILL = 'agent-libos-object-tasks';
export const TARGETS_SKILL = 'test-task-targets';
export const TASK_IMAGE = 'task-agent:v0';
/** The Skills active at spawn in the task test image (the checkpoint test image adds its own to these). */
export const TASK_IMAGE_SKILLS = [
  'agent-libos-skill-navigation',
  'agent-libos-runtime-session',
  'agent-libos-object-memory',
  'agent-libos-child-processes',
  'agent-libos-authority',
  TASKS_SKILL,
  TARGETS_SKILL,
];
export const TASK_TOOLS = [
  'process_exit',
  'get_current_time',
  'create_memory_namespace',
  'list_memory_namespace',
  'create_memory_object',
  'read_memory_object',
  'append_memory_object',
  'spawn_child_process',
  'wait_child_process',
  'send_process_message',
  'receive_process_messages',
  'read_process_messages',
  'ask_human',
  'request_permission',
  'start_object_task',
  'get_object_task',
  'list_object_tasks',
  'wait_object_task',
  'watch_object_task_owner',
  'cancel_object_task',
  'tt_echo',
  'tt_fail',
  'tt_write',
  'tt_write_then_wait',
];

const TARGETS_SKILL_MD = `---
name: ${TARGETS_SKILL}
description: Target tools for ObjectTask scenarios; each records its runs.
allowed-tools: tt_echo tt_fail tt_write tt_write_then_wait tt_hidden
---
tt_echo returns its text; tt_fail fails; tt_write writes a key to the test's outside world under write on file:<key>.
`;

export interface Targets {
  readonly plugin: Plugin;
  /** Every completed target run: `<tool>:<arg>`. */
  readonly runs: string[];
  /** The "outside world" tt_write changes (survives a rolled-back transaction, like a file would). */
  readonly files: Map<string, string>;
}

export function targetsPlugin(): Targets {
  const runs: string[] = [];
  const files = new Map<string, string>();
  const echo = defineTool({
    name: 'tt_echo',
    description: 'Return the text.',
    input: z.object({ text: z.string().min(1).max(64) }),
    output: z.object({ text: z.string(), run: z.number() }),
    run({ text }) {
      runs.push(`tt_echo:${text}`);
      return { text, run: runs.length };
    },
  });
  const fail = defineTool({
    name: 'tt_fail',
    description: 'Fail with a conflict.',
    input: z.object({ why: z.string().min(1).max(64) }),
    run({ why }) {
      runs.push(`tt_fail:${why}`);
      throw new LibosError('conflict', `tt_fail: ${why}`);
    },
  });
  const write = defineTool({
    name: 'tt_write',
    description: 'Write a key to the outside world (needs write on file:<key>).',
    input: z.object({ key: z.string().min(1).max(64), text: z.string().max(64).default('x') }),
    policy: { sideEffects: true },
    async run({ key, text }, ctx) {
      await ctx.authority.require(`file:${key}`, 'write');
      files.set(key, text);
      runs.push(`tt_write:${key}`);
      return { key };
    },
  });
  const writeThenWait = defineTool({
    name: 'tt_write_then_wait',
    description: 'Write a key to the outside world, then wait for a message on channel go-<key>.',
    input: z.object({ key: z.string().min(1).max(64) }),
    policy: { sideEffects: true },
    run({ key }, ctx) {
      if (ctx.resumed) return { key };
      files.set(key, 'written');
      runs.push(`tt_write_then_wait:${key}`);
      return ctx.wait({ kind: 'message', filters: { channel: `go-${key}` } });
    },
  });
  const hidden = defineTool({ name: 'tt_hidden', description: 'Not in any table.', input: z.object({}), run: () => ({}) });
  const plugin = definePlugin({
    name: 'test-task-targets',
    version: '0.0.0',
    skills: [skillFromText(TARGETS_SKILL_MD, TARGETS_SKILL)],
    tools: [echo, fail, write, writeThenWait, hidden],
    images: [
      {
        id: TASK_IMAGE,
        description: 'Task, memory, mailbox and target tools, all visible at spawn.',
        systemPrompt: 'You are a task test agent.',
        promptMode: 'libos_default',
        defaultSkills: TASK_IMAGE_SKILLS,
        defaultTools: TASK_TOOLS,
        // Exactly these tools: tt_hidden's Skill is loaded, yet tt_hidden stays outside the table (OT-5).
        toolTablePolicy: 'exact',
      },
    ],
  });
  return { plugin, runs, files };
}

export interface TaskHarness {
  readonly rt: Runtime;
  readonly targets: Targets;
  /** The runtime's clock: it moves only when a test moves it. */
  readonly clock: TestClock;
}

/** A clock a test moves by hand (task-wait deadlines are measured on it). */
export interface TestClock {
  now(): Date;
  advance(ms: number): void;
}

export function testClock(start = Date.parse('2026-01-01T00:00:00.000Z')): TestClock {
  let t = start;
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

/**
 * Opens the runtime (in memory unless `path`; a reopen passes `idStart` past the ids the first runtime used);
 * `kyselyPlugins` reach the store's Kysely instance (e.g. `failInserts` from `store-faults.ts`).
 */
export async function openTaskHarness(
  opts: {
    path?: string;
    idStart?: number;
    tasks?: TasksOptions;
    clock?: TestClock;
    kyselyPlugins?: readonly StorePlugin[];
    /** One host of many on a postgres:// path (`openRuntime({ host })`). */
    host?: HostOptions;
  } = {},
): Promise<TaskHarness> {
  const targets = targetsPlugin();
  const clock = opts.clock ?? testClock();
  const rt = await openRuntime({
    path: opts.path ?? ':memory:',
    plugins: [capabilities(), objectMemory(), tasks(opts.tasks ?? {}), session(), targets.plugin],
    config: { ids: sequentialIds(opts.idStart ?? 0), clock },
    ...(opts.kyselyPlugins ? { kyselyPlugins: opts.kyselyPlugins } : {}),
    ...(opts.host ? { host: opts.host } : {}),
  });
  return { rt, targets, clock };
}

/**
 * A provider for the processes a test drives by hand: every model turn is empty, so they stay runnable and idle
 * while runners (which never ask a model) do the work. Use with `maxEmptyReplies: Infinity`.
 */
export const idleProvider: LlmProvider = {
  name: 'idle',
  model: 'idle',
  completeAction: async () => ({
    content: null,
    toolCalls: [],
    api: 'idle',
    model: 'idle',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }),
};

/** Runs the scheduler for at most `quanta` quanta with the idle provider (runners settle; other processes idle). */
export async function drive(rt: Runtime, quanta = 24): Promise<RunReport> {
  return rt.run({ provider: idleProvider, maxQuanta: quanta, maxEmptyReplies: Number.POSITIVE_INFINITY });
}

/** A task-agent root process holding `process:spawn` write, with a mutable owner Object named `owner` in its scope. */
export async function creatorWithOwner(
  rt: Runtime,
  goal = 'creator',
  opts: { spawn?: boolean; parentPid?: string } = {},
): Promise<{ pid: string; owner: string }> {
  const p = await rt.spawn({ goal, image: TASK_IMAGE, ...(opts.parentPid ? { parentPid: opts.parentPid } : {}) });
  if (opts.spawn !== false) await rt.grant(p.pid, 'process:spawn', ['write']);
  const r = await rt.call(p.pid, 'create_memory_object', { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false });
  if (!r.ok) throw new Error(`owner: ${JSON.stringify(r.error)}`);
  return { pid: p.pid, owner: (r.payload as Json).oid };
}
