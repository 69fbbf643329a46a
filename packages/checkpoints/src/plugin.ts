import { definePlugin, skillFromFile, type Plugin } from '@libos/sdk';
import { CHECKPOINTS_SERVICE, checkpointsService } from './checkpoints-service.js';
import { CHECKPOINT_ERROR_CODES, DEFAULT_CHECKPOINT_LIMITS, type CheckpointLimits } from './bounds.js';
import { checkpointOwners } from './internal/owners.js';
import { migrations } from './internal/store.js';
import { CHECKPOINTS_SKILL_URL, OBJECT_FILES_SKILL_URL } from './skill-files.js';
import {
  createCheckpoint,
  diffCheckpoint,
  forkCheckpoint,
  inspectCheckpoint,
  listCheckpoints,
  restoreCheckpoint,
} from './tools/checkpoint-tools.js';
import { readFileToObject, writeObjectToFile } from './tools/object-file-tools.js';
import { VERSION } from './version.js';

export interface CheckpointsOptions {
  /** Size bounds (defaults: 1,048,576 bytes per captured value, 16,777,216 per checkpoint). */
  readonly limits?: Partial<CheckpointLimits>;
}

/**
 * The checkpoints plugin: the Skill `agent-libos-checkpoints` (create, list, inspect, diff, restore and fork a
 * checkpoint of a process subtree), the Skill `agent-libos-object-files` (an Object's text to a file and back), the
 * `checkpoint*` tables, the `checkpoints` service (the CLI's path, as host or as a pid) and the owners of
 * `checkpoint:<id>`. It captures and restores through the kernel's `subtree_state` service, which runs every
 * package's own contributor, and reaches files through the workspace's `files` service: it imports only the sdk.
 *
 * @example
 * const plugins = [capabilities(), objectMemory(), tasks(), session(), workspace(), checkpoints()];
 * const rt = await openRuntime({ path: ':memory:', plugins });
 */
export function checkpoints(options: CheckpointsOptions = {}): Plugin {
  const limits: CheckpointLimits = { ...DEFAULT_CHECKPOINT_LIMITS, ...(options.limits ?? {}) };
  for (const [k, v] of Object.entries(limits))
    if (!Number.isInteger(v) || v < 1) throw new TypeError(`checkpoints: limits.${k} must be a positive integer`);
  if (limits.maxCaptureBytes > limits.maxCheckpointBytes)
    throw new TypeError('checkpoints: limits.maxCaptureBytes must not exceed limits.maxCheckpointBytes');
  return definePlugin({
    name: '@libos/checkpoints',
    version: VERSION,
    skills: [skillFromFile(CHECKPOINTS_SKILL_URL), skillFromFile(OBJECT_FILES_SKILL_URL)],
    tools: [
      createCheckpoint,
      listCheckpoints,
      inspectCheckpoint,
      diffCheckpoint,
      restoreCheckpoint,
      forkCheckpoint,
      writeObjectToFile,
      readFileToObject,
    ],
    migrations,
    services: { [CHECKPOINTS_SERVICE]: (scope) => checkpointsService(scope, limits) },
    owners: [checkpointOwners],
    errorCodes: CHECKPOINT_ERROR_CODES,
  });
}
