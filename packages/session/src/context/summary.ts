import { LibosError } from '@libos/sdk';

/** The ten keys every compressor summary holds (the stage's `process_exit` payload). */
export const SUMMARY_KEYS = [
  'goal',
  'constraints',
  'user_preferences',
  'completed',
  'pending',
  'key_references',
  'recent_decisions',
  'risks',
  'uncertainties',
  'next_steps',
] as const;

/** The empty summary a first stage rolls forward from. */
export const EMPTY_SUMMARY: Readonly<Record<string, unknown>> = Object.freeze({});

const isEmpty = (v: unknown): boolean =>
  v === null ||
  v === undefined ||
  (typeof v === 'string' && v.trim() === '') ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);

/**
 * Checks a compressor's summary: a JSON object holding all ten SUMMARY_KEYS, not all of them empty. Throws
 * `invalid_arguments` with "missing required fields: …" or "empty summary".
 *
 * @example
 * validateSummary({ goal: 'ship', constraints: [], user_preferences: [], completed: [], pending: [], key_references: [],
 *   recent_decisions: [], risks: [], uncertainties: [], next_steps: [] }, pid); // ok: goal is not empty
 */
export function validateSummary(summary: unknown, childPid: string): Record<string, unknown> {
  if (summary === null || typeof summary !== 'object' || Array.isArray(summary)) {
    throw new LibosError(
      'invalid_arguments',
      `context compressor ${childPid} returned a summary that is not a JSON object: missing required fields: ${SUMMARY_KEYS.join(', ')}`,
      {
        details: { child_pid: childPid, missing: [...SUMMARY_KEYS] },
      },
    );
  }
  const s = summary as Record<string, unknown>;
  const missing = SUMMARY_KEYS.filter((k) => !Object.hasOwn(s, k));
  if (missing.length > 0) {
    throw new LibosError(
      'invalid_arguments',
      `context compressor ${childPid} returned a summary with missing required fields: ${missing.join(', ')}`,
      {
        details: { child_pid: childPid, missing },
      },
    );
  }
  if (SUMMARY_KEYS.every((k) => isEmpty(s[k]))) {
    throw new LibosError(
      'invalid_arguments',
      `context compressor ${childPid} returned an empty summary: every one of ${SUMMARY_KEYS.join(', ')} is empty`,
      {
        details: { child_pid: childPid },
      },
    );
  }
  return s;
}
