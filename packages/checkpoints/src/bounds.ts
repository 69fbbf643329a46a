/** Size bounds of a checkpoint (Object Memory's durability rules), configurable per plugin instance. */
export interface CheckpointLimits {
  /** Largest captured value (one Object payload), in bytes of its canonical JSON: 1,048,576. */
  readonly maxCaptureBytes: number;
  /** Largest sum of captured values in one checkpoint: 16,777,216. */
  readonly maxCheckpointBytes: number;
}

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = Object.freeze({ maxCaptureBytes: 1_048_576, maxCheckpointBytes: 16_777_216 });

/** The plugin's own error codes, under the closed categories. */
export const CHECKPOINT_ERROR_CODES = {
  checkpoint_not_found: 'not_found',
  checkpoint_too_large: 'invalid_argument',
  checkpoint_corrupt: 'internal',
} as const;
