/** How much of the log's recent text a deflated record may refer to (deflate's own window). */
export const REDO_WINDOW_BYTES = 32 * 1024;

/**
 * The last 32 KB of a redo log's record texts, in order: the dictionary a record deflated on its own was compressed
 * against by writers before K-9.18 (which pushed every record's text into one). Only a reader keeps one now, for such
 * logs, pushing every record's text as those writers did. Pushing copies the text once; the buffer is compacted only
 * when full.
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
