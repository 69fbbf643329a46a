/** How much of the log's recent text a deflated record may refer to (deflate's own window). */
export const REDO_WINDOW_BYTES = 32 * 1024;

/**
 * The last 32 KB of a redo log's record texts, in order: the dictionary a deflated record is compressed against
 * (a unit repeats most of the units before it: the same columns, ids, prompts). The writer and the reader each keep
 * one and push every record's text into it, so both hold the same bytes at every record. Pushing copies the text
 * once; the buffer is compacted only when full.
 */
export class RedoWindow {
  #buf = Buffer.allocUnsafe(2 * REDO_WINDOW_BYTES);
  #end = 0;

  /** The text the next record may refer to; undefined at the start of a log. */
  get dictionary(): Buffer | undefined {
    return this.#end === 0 ? undefined : this.#buf.subarray(Math.max(0, this.#end - REDO_WINDOW_BYTES), this.#end);
  }

  /** Appends a record's text. */
  push(text: Uint8Array): void {
    if (text.length >= REDO_WINDOW_BYTES) {
      this.#buf.set(text.subarray(text.length - REDO_WINDOW_BYTES), 0);
      this.#end = REDO_WINDOW_BYTES;
      return;
    }
    if (this.#end + text.length > this.#buf.length) {
      this.#buf.copy(this.#buf, 0, this.#end - REDO_WINDOW_BYTES, this.#end);
      this.#end = REDO_WINDOW_BYTES;
    }
    this.#buf.set(text, this.#end);
    this.#end += text.length;
  }

  /** Forgets everything (the log was emptied). */
  clear(): void {
    this.#end = 0;
  }
}
