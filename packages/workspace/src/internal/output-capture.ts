import { completeEnd, forwardToCharBoundary } from './utf8.js';

/** What one output stream of a command left: its head and tail when it was longer than the bound. */
export interface CapturedOutput {
  /** The text kept (head, a marker line, tail when truncated); bytes that are not UTF-8 read as U+FFFD. */
  readonly text: string;
  /** Bytes the stream produced in all. */
  readonly total_bytes: number;
  readonly truncated: boolean;
  /** Bytes left out between head and tail. */
  readonly omitted_bytes: number;
}

/**
 * Keeps the first and the last bytes of a stream within `maxBytes` (half each), whatever its length: memory stays
 * bounded by about twice the bound. `result()` cuts on UTF-8 character boundaries and marks the omission.
 *
 * @example
 * const out = new OutputCapture(8);
 * out.push(Buffer.from('0123456789abcdef'));
 * out.result().text; // '0123\n[... 8 bytes omitted ...]\ncdef'
 */
export class OutputCapture {
  readonly #headMax: number;
  readonly #tailMax: number;
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;

  constructor(maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 2)
      throw new RangeError(`OutputCapture: maxBytes must be an integer >= 2 (got ${maxBytes})`);
    this.#headMax = Math.ceil(maxBytes / 2);
    this.#tailMax = maxBytes - this.#headMax;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#headMax) {
      const take = Math.min(this.#headMax - this.#headBytes, rest.length);
      this.#head.push(rest.subarray(0, take));
      this.#headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    if (this.#tailBytes > 2 * this.#tailMax + 65_536) this.#compactTail();
  }

  #compactTail(): void {
    const all = Buffer.concat(this.#tail);
    const kept = Buffer.from(all.subarray(Math.max(0, all.length - this.#tailMax)));
    this.#tail = [kept];
    this.#tailBytes = kept.length;
  }

  get totalBytes(): number {
    return this.#total;
  }

  result(): CapturedOutput {
    const head = Buffer.concat(this.#head);
    const tailAll = Buffer.concat(this.#tail);
    const decoder = () => new TextDecoder('utf-8');
    if (this.#total <= this.#headMax + this.#tailMax) {
      return { text: decoder().decode(Buffer.concat([head, tailAll])), total_bytes: this.#total, truncated: false, omitted_bytes: 0 };
    }
    const tail = tailAll.subarray(tailAll.length - this.#tailMax);
    const headEnd = completeEnd(head);
    const tailStart = forwardToCharBoundary(tail, 0);
    const omitted = this.#total - headEnd - (tail.length - tailStart);
    const marker = `\n[... ${omitted} bytes omitted ...]\n`;
    const text = decoder().decode(head.subarray(0, headEnd)) + marker + decoder().decode(tail.subarray(tailStart));
    return { text, total_bytes: this.#total, truncated: true, omitted_bytes: omitted };
  }
}
