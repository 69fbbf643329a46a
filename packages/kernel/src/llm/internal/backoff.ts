/** Backoff for retried provider calls: exponential with jitter, or the server's `Retry-After` when it sent one. */

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 8_000;
/** The longest `Retry-After` we honour; longer values are cut to this. */
export const RETRY_AFTER_CAP_MS = 30_000;

/**
 * Delay before retry number `retry` (0 for the first retry): `min(cap, base·2^retry)`, jittered into its upper
 * half with `random() ∈ [0, 1)`; a parseable `Retry-After` wins, capped at `RETRY_AFTER_CAP_MS`.
 */
export function retryDelayMs(retry: number, retryAfter: string | null, random: () => number, now: number = Date.now()): number {
  const serverMs = parseRetryAfterMs(retryAfter, now);
  if (serverMs !== null) return Math.min(serverMs, RETRY_AFTER_CAP_MS);
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** `Retry-After` as milliseconds: delta-seconds (`"2"`, `"1.5"`) or an HTTP date; `null` when absent or unparseable. */
export function parseRetryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // an HTTP date names its month; without this, Date.parse would read "-1" as the year -1
  if (!/[A-Za-z]/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
