import { definePlugin, skillFromFile, type HostSettings, type Plugin } from '@libos/sdk';
import { HUMAN_OUTPUT_SKILL_URL, RUNTIME_SESSION_SKILL_URL } from './skill-files.js';
import { DEFAULT_TIMEZONE, getCurrentTimeTool } from './tools/get-current-time.js';
import { humanOutput } from './tools/human-output.js';
import { processExit } from './tools/process-exit.js';
import { MAX_SLEEP_SECONDS, sleepTool } from './tools/sleep.js';
import { compactProcessContext } from './context/compact-process-context.js';
import { CONTEXT_COMPRESSOR } from './context/compressor-image.js';
import { rebuildStageGoals } from './context/reopen-stage-goals.js';
import { VERSION } from './version.js';

export { processExit, MAX_EXIT_MESSAGE_CHARS } from './tools/process-exit.js';
export { getCurrentTime, getCurrentTimeTool, isoInZone, DEFAULT_TIMEZONE } from './tools/get-current-time.js';
export { sleep, sleepTool, MAX_SLEEP_SECONDS } from './tools/sleep.js';
export { humanOutput, MAX_HUMAN_OUTPUT_CHARS } from './tools/human-output.js';
export { completionEvidenceSchema, type CompletionEvidence, type AcceptanceCheck } from './review/completion-evidence.js';
export { reviewToken, acknowledgedMessagesSha256, REVIEW_TOKEN_PREFIX, type ReviewIdentity } from './review/review-token.js';
export { MESSAGE_READ_HARD_LIMIT } from './review/review-state.js';
export type { CompletionReview } from './review/build-review.js';
export { compactProcessContext } from './context/compact-process-context.js';
export { CONTEXT_COMPRESSOR, CONTEXT_COMPRESSOR_IMAGE, stageObjectName } from './context/compressor-image.js';
export { SUMMARY_KEYS, validateSummary } from './context/summary.js';
export { chunkEntries } from './context/chunks.js';
export { jobObjectName, type CompactionJob } from './context/compaction-job.js';

/** Options of the session plugin; each one it is given wins over the host config's setting. */
export interface SessionOptions {
  /** Default IANA timezone of `get_current_time` (else the host config's `timezone`, else `UTC`). */
  readonly timezone?: string;
  /** The largest `seconds` of one `sleep` (else the host config's `sleep.max_seconds`, else 60). */
  readonly maxSleepSeconds?: number;
}

/**
 * The runtime-session plugin: the `agent-libos-runtime-session` Skill (wall-clock time, one bounded `sleep`,
 * `process_exit` with its completion review) and the `agent-libos-human-output` Skill (`human_output`). The
 * timezone default and the sleep maximum come from the options, else from the host config (`openRuntime` calls
 * `configure`), else `UTC` and 60 s; the tool schemas the model sees show them.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [objectMemory(), session()], hostConfig: { timezone: 'Asia/Shanghai' } });
 * session({ maxSleepSeconds: 5 }); // sleep(6) is invalid_arguments, whatever the host config says
 */
export function session(opts: SessionOptions = {}): Plugin {
  const build = (timezone: string, maxSleepSeconds: number): Plugin =>
    definePlugin({
      name: '@libos/session',
      version: VERSION,
      skills: [skillFromFile(RUNTIME_SESSION_SKILL_URL), skillFromFile(HUMAN_OUTPUT_SKILL_URL)],
      tools: [processExit, compactProcessContext, getCurrentTimeTool(timezone), sleepTool(maxSleepSeconds), humanOutput],
      images: [CONTEXT_COMPRESSOR],
      hooks: { open: async (scope) => void (await rebuildStageGoals(scope)) },
      configure: (host: HostSettings) => build(opts.timezone ?? host.timezone, opts.maxSleepSeconds ?? host.sleep.max_seconds),
    });
  return build(opts.timezone ?? DEFAULT_TIMEZONE, opts.maxSleepSeconds ?? MAX_SLEEP_SECONDS);
}
