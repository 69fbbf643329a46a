import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, unlinkSync, writeSync, writevSync } from 'node:fs';
import { constants, crc32, inflateRawSync } from 'node:zlib';
import { LibosError } from '@libos/sdk';
import { RedoWindow } from './redo-window.js';
import { SyncDeflate } from '../../internal/sync-deflate.js';

/** One write statement of a unit, as it ran: its SQL text and its bound parameters. */
export interface RedoStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** One committed unit of work: its number (increasing over the store's life) and its net write statements. */
export interface RedoUnit {
  readonly n: number;
  readonly statements: readonly RedoStatement[];
}

/** Where a store's redo log lives: beside the store file. */
export const redoLogPath = (location: string): string => `${location}-redo`;

/**
 * A record's frame (little endian): u32 word, u32 CRC-32 of what follows the header; a streamed record adds u32 its
 * text's length (covered by the CRC too). The word is the stored payload's length plus flags: `STREAMED` (a segment of
 * the log's deflate stream, K-9.18), `STREAM_START` (that stream starts here), or `DEFLATED` (a record of logs
 * written before K-9.18: deflated on its own against the 32 KB of text before it, `RedoWindow`; still read).
 */
const HEADER = 8;
const STREAMED_HEADER = 12;
const DEFLATED = 0x8000_0000; // 2^31
const STREAMED = 0x4000_0000; // 2^30
const STREAM_START = 0x2000_0000; // 2^29
const LENGTH_MASK = STREAM_START - 1;

/**
 * A record whose text is at least this long is stored as the next segment of the log's deflate stream (level 1, each
 * ended by a sync flush, so it refers back to the big records before it): a model turn's unit (its prompt's hashes,
 * its audit rows) shrinks about 5x, while a call's unit (about 2 KB) is written as it is, costing no CPU.
 */
export const REDO_DEFLATE_FROM = 4096;

/**
 * A parameter as JSON: strings, numbers and null as they are; blobs and bigints tagged, so a replay binds the same
 * value (better-sqlite3 takes exactly these kinds).
 */
function encodeParam(v: unknown): unknown {
  if (typeof v === 'bigint') return { i: v.toString() };
  if (v instanceof Uint8Array) return { b: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
  return v;
}

/** The parameters as JSON values: the same array when every one is a string, a number or null (the usual case). */
function encodeParams(params: readonly unknown[]): readonly unknown[] {
  for (const v of params) if (typeof v === 'bigint' || (v !== null && typeof v === 'object')) return params.map(encodeParam);
  return params;
}

function decodeParam(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  const o = v as { i?: string; b?: string };
  if (typeof o.i === 'string') return BigInt(o.i);
  if (typeof o.b === 'string') return Buffer.from(o.b, 'base64');
  throw new Error(`unknown parameter encoding ${JSON.stringify(v)}`);
}

/**
 * The redo log of a SQLite store under group commit: each committed unit of work is appended as one framed record
 * (length, CRC-32, JSON) with one `write` call before the unit counts as committed, so a crash after that keeps the
 * unit even though SQLite has not committed it yet. SQL texts are written once per log file and referred to by
 * number after. The log is emptied when SQLite has committed every unit in it (`reset`).
 *
 * @example
 * const log = RedoLog.open('/data/libos.db-redo');
 * log.append({ n: 1, statements: [{ sql: 'insert into t (v) values (?)', params: ['x'] }] });
 * RedoLog.read('/data/libos.db-redo'); // [{ n: 1, statements: [...] }]
 */
export class RedoLog {
  readonly #path: string;
  #fd: number;
  #texts = new Map<string, number>();
  #bytes = 0;
  /** Reused for every record (grown when one does not fit), so an append allocates no frame. */
  #frame = Buffer.allocUnsafe(64 * 1024);
  /** The log's deflate stream (null where Node lacks what it needs: big records are then written as they are). */
  readonly #deflate = SyncDeflate.open();
  /** Whether the next streamed record continues the stream in the file (false: it starts a new one). */
  #streaming = false;

  private constructor(path: string, fd: number) {
    this.#path = path;
    this.#fd = fd;
  }

  /** Opens (creating, emptied) the log at `path` for appending. */
  static open(path: string): RedoLog {
    return new RedoLog(path, openSync(path, 'w'));
  }

  get path(): string {
    return this.#path;
  }

  /** Bytes appended since the last reset. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Appends one unit with one `write` call; throws (nothing counted) when the write fails. */
  append(unit: RedoUnit): void {
    const defs: [number, string][] = [];
    const fresh = new Map<string, number>();
    const statements = unit.statements.map((s) => {
      let id = this.#texts.get(s.sql) ?? fresh.get(s.sql);
      if (id === undefined) {
        id = this.#texts.size + fresh.size;
        fresh.set(s.sql, id);
        defs.push([id, s.sql]);
      }
      return [id, encodeParams(s.params)];
    });
    const json = JSON.stringify({ n: unit.n, d: defs, s: statements });
    const most = HEADER + json.length * 3; // UTF-8 takes at most 3 bytes per UTF-16 unit
    if (this.#frame.length < most) this.#frame = Buffer.allocUnsafe(Math.max(most, this.#frame.length * 2));
    const frame = this.#frame;
    const length = frame.write(json, HEADER, 'utf8');
    const text = frame.subarray(HEADER, HEADER + length);
    if (length > LENGTH_MASK) {
      throw new LibosError('internal_error', `redo log ${this.#path}: unit ${unit.n} is ${length} bytes, above a record's ${LENGTH_MASK}`);
    }
    let size: number;
    let written: number;
    if (length >= REDO_DEFLATE_FROM && this.#deflate) {
      // Once pushed, the stream has this text in its history: unless the record reaches the file whole, the next one
      // must start a new stream (a reader rebuilds the history from the file alone).
      const start = !this.#streaming;
      this.#streaming = false;
      if (start) this.#deflate.reset();
      const packed = this.#deflate.push(text);
      const header = Buffer.allocUnsafe(STREAMED_HEADER);
      header.writeUInt32LE(packed.length + STREAMED + (start ? STREAM_START : 0), 0);
      header.writeUInt32LE(length, 8);
      header.writeUInt32LE(crc32(packed, crc32(header.subarray(8))), 4);
      size = STREAMED_HEADER + packed.length;
      written = writevSync(this.#fd, [header, packed], this.#bytes);
      this.#streaming = written === size;
    } else {
      frame.writeUInt32LE(length, 0);
      frame.writeUInt32LE(crc32(text), 4);
      size = HEADER + length;
      written = writeSync(this.#fd, frame, 0, size, this.#bytes);
    }
    if (written !== size) {
      // A short write (full disk): cut it off, so the log ends at the last whole record.
      ftruncateSync(this.#fd, this.#bytes);
      throw Object.assign(new Error(`short write to ${this.#path} (${written} of ${size} bytes)`), { code: 'ENOSPC' });
    }
    for (const [id, sql] of defs) this.#texts.set(sql, id);
    this.#bytes += size;
  }

  /** Empties the log: every unit in it is committed in the store. */
  reset(): void {
    ftruncateSync(this.#fd, 0);
    this.#texts = new Map();
    this.#streaming = false;
    this.#bytes = 0;
  }

  /** Closes the log and removes its (empty) file. */
  close({ remove }: { remove: boolean }): void {
    this.#deflate?.close();
    closeSync(this.#fd);
    if (remove) unlinkSync(this.#path);
  }

  /**
   * The whole records of the log at `path`, in order (none when there is no file). A record cut short or failing
   * its checksum ends the log: it is the tail a crash interrupted, and nothing after it was ever acknowledged.
   */
  static read(path: string): RedoUnit[] {
    if (!existsSync(path)) return [];
    const buf = readFileSync(path);
    const texts = new Map<number, string>();
    const window = new RedoWindow();
    const units: RedoUnit[] = [];
    for (const text of recordTexts(path, buf, window)) {
      const rec = parsedRecord(path, text);
      for (const [id, sql] of rec.d) texts.set(id, sql);
      units.push({
        n: rec.n,
        statements: rec.s.map(([id, params]) => {
          const sql = texts.get(id);
          if (sql === undefined) throw new LibosError('store_corrupt', `redo log ${path}: unit ${rec.n} names unknown statement ${id}`);
          return { sql, params: params.map(decodeParam) };
        }),
      });
    }
    return units;
  }
}

/** A record's text as JSON; text that is not (a stream segment inflated against the wrong history) is corrupt. */
function parsedRecord(path: string, text: Buffer): { n: number; d: [number, string][]; s: [number, unknown[]][] } {
  try {
    return JSON.parse(text.toString('utf8'));
  } catch (err) {
    throw new LibosError('store_corrupt', `redo log ${path}: a record is not JSON (${(err as Error).message})`, { cause: err });
  }
}

/** A whole record as framed: a text as it is, a text deflated on its own (before K-9.18), or a stream segment. */
type Frame =
  | { readonly kind: 'text'; readonly payload: Buffer }
  | { readonly kind: 'deflated'; readonly payload: Buffer }
  | { readonly kind: 'streamed'; readonly payload: Buffer; readonly length: number; readonly start: boolean };

/** The whole records at the start of `buf`: the first one cut short or failing its checksum ends them. */
function frames(buf: Buffer): Frame[] {
  const out: Frame[] = [];
  for (let at = 0; at + HEADER <= buf.length; ) {
    const word = buf.readUInt32LE(at);
    const streamed = word < DEFLATED && (word & STREAMED) !== 0;
    const header = streamed ? STREAMED_HEADER : HEADER;
    const end = at + header + (word >= DEFLATED ? word - DEFLATED : streamed ? word & LENGTH_MASK : word);
    if (end > buf.length) break;
    const payload = buf.subarray(at + header, end);
    const crc = streamed ? crc32(payload, crc32(buf.subarray(at + 8, at + 12))) : crc32(payload);
    if (crc !== buf.readUInt32LE(at + 4)) break;
    if (streamed) out.push({ kind: 'streamed', payload, length: buf.readUInt32LE(at + 8), start: (word & STREAM_START) !== 0 });
    else out.push({ kind: word >= DEFLATED ? 'deflated' : 'text', payload });
    at = end;
  }
  return out;
}

/**
 * The texts of the log's whole records, in order. The segments of one deflate stream (from a `STREAM_START` to the
 * next; the small records between them are not in it) are inflated at once, as the one stream they are, and cut at
 * their text lengths; a record deflated on its own is inflated against the window of text before it.
 */
function recordTexts(path: string, buf: Buffer, window: RedoWindow): Buffer[] {
  const all = frames(buf);
  const streamTexts = new Map<Frame, Buffer>();
  let stream: Extract<Frame, { kind: 'streamed' }>[] = [];
  const inflateStream = () => {
    if (stream.length === 0) return;
    let text = inflated(path, Buffer.concat(stream.map((g) => g.payload)), undefined, constants.Z_SYNC_FLUSH);
    for (const g of stream) {
      if (text.length < g.length) throw new LibosError('store_corrupt', `redo log ${path}: a deflate stream ends early`);
      streamTexts.set(g, text.subarray(0, g.length));
      text = text.subarray(g.length);
    }
    stream = [];
  };
  for (const f of all) {
    if (f.kind !== 'streamed') continue;
    if (f.start) inflateStream();
    else if (stream.length === 0) throw new LibosError('store_corrupt', `redo log ${path}: a deflate stream segment has no start`);
    stream.push(f);
  }
  inflateStream();
  // Only a record deflated on its own (a log written before K-9.18) needs the text before it: no other log copies any.
  const legacy = all.some((f) => f.kind === 'deflated');
  return all.map((f) => {
    const text =
      f.kind === 'streamed' ? streamTexts.get(f)! : f.kind === 'deflated' ? inflated(path, f.payload, window.dictionary) : f.payload;
    if (legacy) window.push(text);
    return text;
  });
}

/** A deflated record's text; a record whose checksum holds but does not inflate is corrupt, not a torn tail. */
function inflated(path: string, payload: Buffer, dictionary: Buffer | undefined, finishFlush?: number): Buffer {
  try {
    return inflateRawSync(payload, { ...(dictionary ? { dictionary } : {}), ...(finishFlush !== undefined ? { finishFlush } : {}) });
  } catch (err) {
    throw new LibosError('store_corrupt', `redo log ${path}: a deflated record does not inflate (${(err as Error).message})`, {
      cause: err,
    });
  }
}
