/**
 * A map keyed by texts that holds at most `mostChars` characters of keys: a `set` that would pass the bound empties
 * it first. For memos of values that are a pure function of their text (a text's key, a text's paragraphs), so
 * emptying one only costs recomputing. The caller decides what text it keeps (a copy, never a slice of a bigger one).
 *
 * @example
 * const memo = new CharBoundedMap<number>(10);
 * memo.set('abcdef', 1);
 * memo.set('ghijkl', 2); // 12 characters would pass 10: the map starts over, then keeps 'ghijkl'
 * memo.get('abcdef'); // undefined
 */
export class CharBoundedMap<V> {
  readonly #entries = new Map<string, V>();
  readonly #mostChars: number;
  #chars = 0;

  constructor(mostChars: number) {
    this.#mostChars = mostChars;
  }

  get(text: string): V | undefined {
    return this.#entries.get(text);
  }

  has(text: string): boolean {
    return this.#entries.has(text);
  }

  /** Keeps `value` for `text`; past the character bound the map starts over first. */
  set(text: string, value: V): void {
    if (this.#chars + text.length > this.#mostChars) {
      this.#entries.clear();
      this.#chars = 0;
    }
    this.#entries.set(text, value);
    this.#chars += text.length;
  }

  /** How many texts are kept. */
  get size(): number {
    return this.#entries.size;
  }
}
