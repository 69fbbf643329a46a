/**
 * Splits a context's entries into the stages of a compaction: `k = clamp(maxChunks, 1, n)` consecutive slices of
 * `ceil(n / k)` entries (so fewer than `k` when the division leaves nothing for the last); no entries is one empty
 * chunk. Every entry is summarized, the preserved tail included.
 *
 * @example
 * chunkEntries([1, 2, 3], 8);      // [[1], [2], [3]]
 * chunkEntries([1, 2, 3, 4, 5], 2); // [[1, 2, 3], [4, 5]]
 */
export function chunkEntries<T>(entries: readonly T[], maxChunks: number): T[][] {
  const n = entries.length;
  if (n === 0) return [[]];
  const k = Math.min(Math.max(1, Math.floor(maxChunks)), n);
  const size = Math.ceil(n / k);
  const out: T[][] = [];
  for (let i = 0; i < n; i += size) out.push(entries.slice(i, i + size));
  return out;
}
