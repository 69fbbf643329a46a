export { checkpoints, type CheckpointsOptions } from './plugin.js';
export {
  CHECKPOINTS_SERVICE,
  HOST_ACTOR,
  ITEMS_SHOWN,
  type Actor,
  type CheckpointInspection,
  type CheckpointsService,
  type CheckpointSummary,
  type ForkResult,
  type RestoreResult,
} from './checkpoints-service.js';
export { DEFAULT_CHECKPOINT_LIMITS, CHECKPOINT_ERROR_CODES, type CheckpointLimits } from './bounds.js';
export type { KindDiff, StateDiff } from './state-diff.js';
export { CHECKPOINTS_SKILL_URL, OBJECT_FILES_SKILL_URL } from './skill-files.js';
export const CHECKPOINT_TOOLS = [
  'create_checkpoint',
  'list_checkpoints',
  'inspect_checkpoint',
  'diff_checkpoint',
  'restore_checkpoint',
  'fork_checkpoint',
] as const;
export const OBJECT_FILE_TOOLS = ['write_object_to_file', 'read_file_to_object'] as const;
export { checkpoints as default } from './plugin.js';
