import { deepFreeze } from './deep-freeze.js';

/** Parsed metadata and labels by their JSON text: one text is one value, so an entry is never stale. */
const PARSED = new Map<string, unknown>();
/**
 * Characters of text kept parsed at most, then the cache starts over (a render of a view with more text than this
 * parses some again). Bounded by characters, not entries: one metadata text may be 131,072 bytes.
 */
const PARSED_MOST_CHARS = 1 << 22;
let parsedChars = 0;

/**
 * `JSON.parse(text)` of a JSON column (metadata, labels), deep-frozen and shared with every reader that meets the same
 * text: a render reads every root's, a create every parent's labels.
 *
 * @example
 * parsedColumn<{ tags: string[] }>('{"tags":["a"]}') === parsedColumn('{"tags":["a"]}'); // true
 */
export function parsedColumn<T>(text: string): T {
  let value = PARSED.get(text);
  if (value === undefined) {
    if (parsedChars + text.length > PARSED_MOST_CHARS) {
      PARSED.clear();
      parsedChars = 0;
    }
    value = deepFreeze(JSON.parse(text) as unknown);
    PARSED.set(text, value);
    parsedChars += text.length;
  }
  return value as T;
}
