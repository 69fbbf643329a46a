/** True for a UTF-8 continuation byte (10xxxxxx). */
const isContinuation = (b: number | undefined) => b !== undefined && (b & 0xc0) === 0x80;

/**
 * The largest `end <= limit` that does not split a UTF-8 character of `bytes` (a cut at `limit` would leave a
 * partial sequence otherwise).
 *
 * @example
 * backToCharBoundary(Buffer.from('aé'), 2); // 1 ('é' is two bytes)
 */
export function backToCharBoundary(bytes: Uint8Array, limit: number): number {
  if (limit >= bytes.length) return bytes.length;
  let end = limit;
  while (end > 0 && isContinuation(bytes[end])) end--;
  return end;
}

/** The smallest `start >= from` that begins a UTF-8 character (skips continuation bytes). */
export function forwardToCharBoundary(bytes: Uint8Array, from: number): number {
  let start = from;
  while (start < bytes.length && isContinuation(bytes[start])) start++;
  return start;
}

/** Length of the UTF-8 sequence a lead byte starts (1 for ASCII and for stray bytes). */
function sequenceLength(lead: number): number {
  if ((lead & 0xe0) === 0xc0) return 2;
  if ((lead & 0xf0) === 0xe0) return 3;
  if ((lead & 0xf8) === 0xf0) return 4;
  return 1;
}

/**
 * `bytes.length`, or less when `bytes` ends inside a character (a prefix of a longer stream): the end of the last
 * complete character.
 *
 * @example
 * completeEnd(Buffer.from('aé').subarray(0, 2)); // 1
 */
export function completeEnd(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  let back = 0;
  while (i >= 0 && back < 3 && isContinuation(bytes[i])) {
    i--;
    back++;
  }
  if (i < 0) return bytes.length;
  return i + sequenceLength(bytes[i]!) > bytes.length ? i : bytes.length;
}
