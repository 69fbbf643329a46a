import { capabilities } from '@libos/capabilities';
import { checkpoints, type CheckpointsOptions, type CheckpointsService } from '@libos/checkpoints';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { definePlugin, sequentialIds, type ServiceScope } from '@libos/sdk';
import { session } from '@libos/session';
import { tasks, type TasksOptions } from '@libos/tasks';
import { workspace } from '@libos/workspace';
import type { Json } from './kernel-harness.js';
import { TASK_IMAGE_SKILLS, TASK_TOOLS, targetsPlugin, testClock, type Targets, type TestClock } from './tasks-harness.js';

/**
 * Harness of the checkpoint scenarios: the real kernel over SQLite with capabilities, Object Memory, ObjectTasks,
 * session, workspace and checkpoints, sequential ids, the task-target tools (their "outside world" survives a
 * restore, as a file would) and an image that sees memory, tasks, checkpoint and Object-file tools from the start.
 */
export const CHECKPOINT_IMAGE = 'checkpoint-agent:v0';
export const CHECKPOINT_TOOLS = [
  ...TASK_TOOLS,
  'fork_child_process',
  'create_checkpoint',
  'list_checkpoints',
  'inspect_checkpoint',
  'diff_checkpoint',
  'restore_checkpoint',
  'fork_checkpoint',
  'write_object_to_file',
  'read_file_to_object',
];

export interface CheckpointHarness {
  readonly rt: Runtime;
  readonly targets: Targets;
  readonly clock: TestClock;
}

export async function openCheckpointHarness(
  opts: {
    path?: string;
    idStart?: number;
    checkpoints?: CheckpointsOptions;
    tasks?: TasksOptions;
    clock?: TestClock;
    baseDirectory?: string;
  } = {},
): Promise<CheckpointHarness> {
  const targets = targetsPlugin();
  const clock = opts.clock ?? testClock();
  const image = definePlugin({
    name: 'test-checkpoint-image',
    version: '0.0.0',
    skills: [],
    tools: [],
    images: [
      {
        id: CHECKPOINT_IMAGE,
        description: 'Memory, tasks, checkpoint and Object-file tools, all visible at spawn.',
        systemPrompt: 'You are a checkpoint test agent.',
        promptMode: 'libos_default',
        defaultSkills: [...TASK_IMAGE_SKILLS, 'agent-libos-checkpoints', 'agent-libos-object-files'],
        defaultTools: CHECKPOINT_TOOLS,
      },
    ],
  });
  const rt = await openRuntime({
    path: opts.path ?? ':memory:',
    plugins: [
      capabilities(),
      objectMemory(),
      tasks(opts.tasks ?? {}),
      session(),
      workspace(opts.baseDirectory ? { baseDirectory: opts.baseDirectory } : {}),
      checkpoints(opts.checkpoints ?? {}),
      targets.plugin,
      image,
    ],
    config: { ids: sequentialIds(opts.idStart ?? 0), clock },
  });
  return { rt, targets, clock };
}

/** A checkpoint-agent root holding `process:spawn` and `checkpoint:process:<pid>` write. */
export async function checkpointAgent(
  rt: Runtime,
  goal = 'agent',
  opts: { parentPid?: string; checkpointWrite?: boolean } = {},
): Promise<string> {
  const p = await rt.spawn({ goal, image: CHECKPOINT_IMAGE, ...(opts.parentPid ? { parentPid: opts.parentPid } : {}) });
  await rt.grant(p.pid, 'process:spawn', ['write']);
  if (opts.checkpointWrite !== false) await rt.grant(p.pid, `checkpoint:process:${p.pid}`, ['write']);
  return p.pid;
}

/** The checkpoints service as the host (the CLI's admin actor), in one transaction. */
export async function asHost<T>(rt: Runtime, fn: (cps: CheckpointsService, scope: ServiceScope) => Promise<T>): Promise<T> {
  return rt.transaction((scope) => fn(scope.service<CheckpointsService>('checkpoints'), scope));
}

/** `{name: version}` of every listed Object of `pid`'s process scope (host inspection). */
export async function versions(rt: Runtime, pid: string): Promise<Record<string, number>> {
  return rt.transaction(async (scope) => {
    const objects = scope.service<Json>('objects');
    const list = (await objects.listObjects({ namespace: `process:${pid}`, limit: 10_000 })) as Json[];
    return Object.fromEntries(list.map((o) => [o.name, o.version]));
  });
}
