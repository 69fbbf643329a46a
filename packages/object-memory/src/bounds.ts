/** Largest payload, measured with SIZE (docs/behaviour/object-memory.md). */
export const MAX_PAYLOAD_SIZE = 200_000;
/** Largest appended entry, measured with SIZE. */
export const MAX_ENTRY_SIZE = 32_768;
/** List bounds: limit 1..50 (default 50); scans read 128 rows a page and stop at a 1,024-row ceiling. */
export const LIST_LIMITS = { min: 1, max: 50, default: 50, scanPage: 128, scanCeiling: 1_024 } as const;
/** Page bounds: max_payload_chars 1..200,000 code points, default 12,000. */
export const READ_LIMITS = { minChars: 1, maxChars: 200_000, defaultChars: 12_000 } as const;
