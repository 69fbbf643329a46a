/** Object Memory's payload bound: SIZE at most 200,000. */
export const MAX_OBJECT_PAYLOAD_SIZE = 200_000;

/**
 * Object Memory's SIZE of a string value: its JSON text with every non-ASCII UTF-16 unit escaped as `\uXXXX` (six
 * characters), quotes included. `{content: s}` measures `jsonStringSize(s) + 13` (`{"content": ` and `}`).
 *
 * @example
 * jsonStringSize('ab"'); // 6: "ab\""
 */
export function jsonStringSize(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c || c === 0x0a || c === 0x0d || c === 0x09) n += 2;
    else if (c < 0x20 || c > 0x7e) n += 6;
    else n += 1;
  }
  return n;
}
