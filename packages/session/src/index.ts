import { definePlugin, skillFromFile, type Plugin } from '@libos/sdk';
import { RUNTIME_SESSION_SKILL_URL } from './skill-files.js';
import { getCurrentTime } from './tools/get-current-time.js';
import { processExit } from './tools/process-exit.js';
import { sleep } from './tools/sleep.js';

export { processExit, MAX_EXIT_MESSAGE_CHARS } from './tools/process-exit.js';
export { getCurrentTime, isoInZone, DEFAULT_TIMEZONE } from './tools/get-current-time.js';
export { sleep, MAX_SLEEP_SECONDS } from './tools/sleep.js';
export { completionEvidenceSchema, type CompletionEvidence, type AcceptanceCheck } from './review/completion-evidence.js';
export { reviewToken, acknowledgedMessagesSha256, REVIEW_TOKEN_PREFIX, type ReviewIdentity } from './review/review-token.js';
export { MESSAGE_READ_HARD_LIMIT } from './review/review-state.js';
export type { CompletionReview } from './review/build-review.js';

/**
 * The runtime-session plugin (`agent-libos-runtime-session`): wall-clock time, one bounded `sleep`, and
 * `process_exit` with its completion review. (Context compaction joins with the session issue.)
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [objectMemory(), session()] });
 */
export function session(): Plugin {
  return definePlugin({
    name: '@libos/session',
    version: '0.1.0',
    skills: [skillFromFile(RUNTIME_SESSION_SKILL_URL)],
    tools: [processExit, getCurrentTime, sleep],
  });
}
