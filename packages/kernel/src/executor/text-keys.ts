import { hash } from 'node:crypto';
import { CharBoundedMap } from '../internal/char-bounded-map.js';

/** A text's `llm_texts` key and the first byte of its digest (where paragraph groups end, `prompt-texts.ts`). */
export interface TextKey {
  readonly key: string;
  readonly first: number;
}

/** Past this many characters of remembered text the memo starts over (it holds each text it keys). */
const MEMO_MOST_CHARS = 1 << 20;

/**
 * `text` as a string of its own. A paragraph cut out of a prompt by `split` is a V8 slice of the whole prompt, and
 * keeping the slice keeps the prompt: an 85-character process line held its ~32 KB prompt, and a runtime grew ~45 KB
 * of heap per agent step (K-9.13). Flattening a one-character concatenation copies the text (and nothing else).
 */
const ownCopy = (text: string): string => ` ${text}`.slice(1);

/**
 * Keys of texts that repeat. A prompt repeats most of its paragraphs every turn (the preamble, the Skill catalog,
 * loaded Skill bodies: ~14 KB of a 17 KB prompt in the bench's step), so looking a remembered paragraph up by its text
 * (a string hash and one compare) replaces a SHA-256 of it. Only what the caller `remember`s is kept, so text sent
 * once (recent events, the memory view) is not held, and it is kept as a copy, never as a slice of the prompt it was
 * cut from (K-9.13). Pure: a key is a function of its text, so a memo shared by every runtime in the process and
 * dropped at any time changes no stored byte.
 *
 * @example
 * const keys = new TextKeys();
 * const k = keys.of('Goal:\nship it'); // hashed
 * keys.remember('Goal:\nship it', k);
 * keys.of('Goal:\nship it') === k; // true: remembered
 */
export class TextKeys {
  readonly #keys: CharBoundedMap<TextKey>;

  constructor(mostChars: number = MEMO_MOST_CHARS) {
    this.#keys = new CharBoundedMap(mostChars);
  }

  /** The first 16 bytes of `text`'s SHA-256 in base64url (22 characters; K-9.11) and its first byte. */
  of(text: string): TextKey {
    const known = this.#keys.get(text);
    if (known) return known;
    const digest = hash('sha256', text, 'buffer'); // one-shot: no Hash object per paragraph
    return { key: digest.toString('base64url', 0, 16), first: digest[0]! };
  }

  /** Keeps `text`'s key (`of` gave it) for the next `of`; past the character bound the memo starts over first. */
  remember(text: string, key: TextKey): void {
    if (!this.#keys.has(text)) this.#keys.set(ownCopy(text), key);
  }

  /** How many texts are remembered (for tests). */
  get size(): number {
    return this.#keys.size;
  }
}
