import { CharBoundedMap } from '../internal/char-bounded-map.js';
import type { LlmMessage } from '../llm/provider.js';
import type { TextKey } from './text-keys.js';

/** The separator prompts are cut at: a paragraph is the unit stored once (`llm_texts`). */
export const PROMPT_CHUNK_SEPARATOR = '\n\n';

/**
 * A section of a message's content as its renderer made it: its text, and whether the renderer hands the very same
 * string again on later turns (`stable`: the system text of an image, the Skill catalog and the loaded Skills of a
 * set of loaded Skills), so its paragraphs' keys can be kept by section. A stable part's text is kept as the memo's
 * key: it must be a string of its own, never a slice of a bigger one (K-9.13).
 */
export interface MessagePart {
  readonly text: string;
  readonly stable: boolean;
}

const PARTS = new WeakMap<LlmMessage, readonly MessagePart[]>();

/**
 * Notes that `message.content` is its parts' texts joined by `PROMPT_CHUNK_SEPARATOR` (K-9.23), and returns it.
 *
 * @example
 * const m = joinedFrom({ role: 'user', content: 'Process: p\n\nGoal:\nx' }, [
 *   { text: 'Process: p', stable: false },
 *   { text: 'Goal:\nx', stable: false },
 * ]);
 */
export function joinedFrom(message: LlmMessage, parts: readonly MessagePart[]): LlmMessage {
  PARTS.set(message, parts);
  return message;
}

/** Paragraphs and their keys, by the text of a stable part. */
interface KeyedPart {
  readonly paragraphs: readonly string[];
  readonly keys: readonly TextKey[];
}

/** Characters of stable parts whose keys are kept (past it the memo starts over: a few MB of Skill text at most). */
const PARTS_MOST_CHARS = 1 << 21;
const keyedParts = new CharBoundedMap<KeyedPart>(PARTS_MOST_CHARS);

/**
 * Whether `content` splits into exactly the paragraphs of its parts, split one by one: the parts' lengths add up,
 * and no part starts or ends with a newline (then no separator straddles the boundary between two parts).
 */
function splitsByParts(content: string, parts: readonly MessagePart[]): boolean {
  let length = PROMPT_CHUNK_SEPARATOR.length * (parts.length - 1);
  for (const { text } of parts) {
    length += text.length;
    if (text.length > 0 && (text.charCodeAt(0) === 10 || text.charCodeAt(text.length - 1) === 10)) return false;
  }
  return length === content.length;
}

const split = (text: string, keyOf: (paragraph: string) => TextKey): KeyedPart => {
  const paragraphs = text.split(PROMPT_CHUNK_SEPARATOR);
  return { paragraphs, keys: paragraphs.map(keyOf) };
};

/**
 * A message's paragraphs (its content cut at `PROMPT_CHUNK_SEPARATOR`) with `keyOf` of each. For a message its
 * renderer joined from parts (`joinedFrom`), a stable part's paragraphs and keys are kept by its text: a part handed
 * again as the same string is found in one step (its hash is cached on the string, and the key compares by
 * reference), where keying its paragraphs hashed and compared each of them in full every turn (K-9.23).
 *
 * @example
 * declare const keyOf: (paragraph: string) => TextKey;
 * keyedParagraphs({ role: 'user', content: 'a\n\nb' }, keyOf).paragraphs; // ['a', 'b']
 */
export function keyedParagraphs(m: LlmMessage, keyOf: (paragraph: string) => TextKey): KeyedPart {
  const parts = PARTS.get(m);
  if (!parts || !splitsByParts(m.content, parts)) return split(m.content, keyOf);
  const paragraphs: string[] = [];
  const keys: TextKey[] = [];
  for (const part of parts) {
    let keyed = part.stable ? keyedParts.get(part.text) : undefined;
    if (!keyed) {
      keyed = split(part.text, keyOf);
      if (part.stable) keyedParts.set(part.text, keyed);
    }
    paragraphs.push(...keyed.paragraphs);
    keys.push(...keyed.keys);
  }
  return { paragraphs, keys };
}
