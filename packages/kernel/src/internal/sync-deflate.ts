import { constants, createDeflateRaw, type DeflateRaw } from 'node:zlib';

/** What `DeflateRaw` keeps that a synchronous, continuing stream needs (Node's own `zlibBufferSync` uses the same). */
interface ZlibInternals {
  readonly _handle?: {
    writeSync(flush: number, input: Buffer, inOff: number, inLen: number, out: Buffer, outOff: number, outLen: number): void;
  };
  readonly _writeState?: Uint32Array;
}

/**
 * One raw-deflate stream that compresses record after record synchronously, each ended by a sync flush, so every
 * record may refer back to the 32 KB of text before it without a dictionary being set up again (K-9.18): the redo
 * log's records are many small texts that repeat one another. What is pushed is byte-for-byte the stream an inflater
 * reads when fed the records in order (`inflateRawSync(concatenated, { finishFlush: Z_SYNC_FLUSH })`). `whole`
 * instead deflates one text as a stream of its own, on the same native state (K-9.20).
 *
 * Node has no public API for a synchronous stream that goes on after a flush (`deflateRawSync` starts a new one every
 * call: ~24 µs of set-up, and ~100 µs to load a 32 KB dictionary); this drives the stream's native handle the way
 * Node's own synchronous functions do. `open` returns null where that handle is missing (another runtime), and the
 * caller then writes records as they are (or uses `deflateRawSync`).
 *
 * @example
 * const z = SyncDeflate.open();
 * const a = z?.push(Buffer.from('{"n":1}')); // a record's compressed bytes, ending on a flush boundary
 * z?.reset(); // the next push starts a new stream
 * const b = z?.whole(Buffer.from('text')); // what deflateRawSync('text', { level: 1 }) returns
 */
export class SyncDeflate {
  readonly #stream: DeflateRaw;
  readonly #handle: NonNullable<ZlibInternals['_handle']>;
  readonly #state: Uint32Array;
  #out = Buffer.allocUnsafe(64 * 1024);
  #error: Error | undefined;
  /** Whether the stream was finished (`whole`): it takes no more input until a reset. */
  #finished = false;

  private constructor(stream: DeflateRaw, handle: NonNullable<ZlibInternals['_handle']>, state: Uint32Array) {
    this.#stream = stream;
    this.#handle = handle;
    this.#state = state;
    stream.on('error', (err: Error) => {
      this.#error = err;
    });
  }

  /** A new stream (zlib `level`, default 1), or null when this Node does not expose what a synchronous stream needs. */
  static open(level = 1): SyncDeflate | null {
    const stream = createDeflateRaw({ level });
    const { _handle: handle, _writeState: state } = stream as unknown as ZlibInternals;
    if (typeof handle?.writeSync !== 'function' || !(state instanceof Uint32Array)) {
      stream.close();
      return null;
    }
    return new SyncDeflate(stream, handle, state);
  }

  /** `input` compressed, continuing the stream, up to a sync-flush boundary (a new Buffer). */
  push(input: Buffer): Buffer {
    if (this.#finished) this.reset();
    return this.#deflate(input, constants.Z_SYNC_FLUSH);
  }

  /**
   * `input` alone as a complete raw-deflate stream, byte for byte what `deflateRawSync(input, { level })` returns,
   * without the ~256 KB of native state that call allocates and frees each time (K-9.20). The stream starts over
   * first, so it refers to nothing pushed before it (one reset a text: a reset clears the state's hash table).
   */
  whole(input: Buffer): Buffer {
    this.reset();
    this.#finished = true;
    return this.#deflate(input, constants.Z_FINISH);
  }

  #deflate(input: Buffer, flush: number): Buffer {
    const chunks: Buffer[] = [];
    let inOff = 0;
    let inLen = input.length;
    for (;;) {
      this.#handle.writeSync(flush, input, inOff, inLen, this.#out, 0, this.#out.length);
      if (this.#error) throw this.#error;
      const outLeft = this.#state[0]!;
      const inLeft = this.#state[1]!;
      chunks.push(Buffer.from(this.#out.subarray(0, this.#out.length - outLeft)));
      inOff += inLen - inLeft;
      inLen = inLeft;
      if (outLeft !== 0) break; // output room to spare: all input taken and flushed (or the stream finished)
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  /** Starts a new stream: the next push refers to nothing before it. */
  reset(): void {
    this.#stream.reset();
    this.#finished = false;
  }

  close(): void {
    this.#stream.close();
  }
}
