import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, unlinkSync, writeSync, writevSync } from 'node:fs';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';
import { LibosError } from '@libos/sdk';
import { RedoWindow } from './redo-window.js';

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

const HEADER = 8; // u32 payload length (top bit: deflated), u32 crc32 of the payload as stored (little endian)
const DEFLATED = 0x8000_0000; // as a number: 2^31, added to the length

/**
 * A record whose text is at least this long is stored deflated (level 1) against the log's last 32 KB of text
 * (`RedoWindow`): a model turn's unit (its prompt's hashes, its audit rows) shrinks about 5x for ~10 µs a KB,
 * while a call's unit (about 2 KB) is written as it is, costing no CPU.
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
  /** The recent text deflated records refer to. */
  readonly #window = new RedoWindow();

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
    const packed = length >= REDO_DEFLATE_FROM ? this.#deflate(text) : undefined;
    const stored = packed ?? text;
    frame.writeUInt32LE(packed ? stored.length + DEFLATED : length, 0);
    frame.writeUInt32LE(crc32(stored), 4);
    const size = HEADER + stored.length;
    const written = packed
      ? writevSync(this.#fd, [frame.subarray(0, HEADER), packed], this.#bytes)
      : writeSync(this.#fd, frame, 0, size, this.#bytes);
    if (written !== size) {
      // A short write (full disk): cut it off, so the log ends at the last whole record.
      ftruncateSync(this.#fd, this.#bytes);
      throw Object.assign(new Error(`short write to ${this.#path} (${written} of ${size} bytes)`), { code: 'ENOSPC' });
    }
    for (const [id, sql] of defs) this.#texts.set(sql, id);
    this.#window.push(text);
    this.#bytes += size;
  }

  /** The record's text deflated against the window, or undefined when that does not make it smaller. */
  #deflate(text: Buffer): Buffer | undefined {
    const dictionary = this.#window.dictionary;
    const packed = deflateRawSync(text, dictionary ? { level: 1, dictionary } : { level: 1 });
    return packed.length < text.length ? packed : undefined;
  }

  /** Empties the log: every unit in it is committed in the store. */
  reset(): void {
    ftruncateSync(this.#fd, 0);
    this.#texts = new Map();
    this.#window.clear();
    this.#bytes = 0;
  }

  /** Closes the log and removes its (empty) file. */
  close({ remove }: { remove: boolean }): void {
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
    for (let at = 0; at + HEADER <= buf.length; ) {
      const word = buf.readUInt32LE(at);
      const deflated = word >= DEFLATED;
      const end = at + HEADER + (deflated ? word - DEFLATED : word);
      if (end > buf.length) break;
      const payload = buf.subarray(at + HEADER, end);
      if (crc32(payload) !== buf.readUInt32LE(at + 4)) break;
      const text = deflated ? inflated(path, payload, window.dictionary) : payload;
      window.push(text);
      const rec = JSON.parse(text.toString('utf8')) as { n: number; d: [number, string][]; s: [number, unknown[]][] };
      for (const [id, sql] of rec.d) texts.set(id, sql);
      units.push({
        n: rec.n,
        statements: rec.s.map(([id, params]) => {
          const sql = texts.get(id);
          if (sql === undefined) throw new LibosError('store_corrupt', `redo log ${path}: unit ${rec.n} names unknown statement ${id}`);
          return { sql, params: params.map(decodeParam) };
        }),
      });
      at = end;
    }
    return units;
  }
}

/** A deflated record's text; a record whose checksum holds but does not inflate is corrupt, not a torn tail. */
function inflated(path: string, payload: Buffer, dictionary: Buffer | undefined): Buffer {
  try {
    return inflateRawSync(payload, dictionary ? { dictionary } : {});
  } catch (err) {
    throw new LibosError('store_corrupt', `redo log ${path}: a deflated record does not inflate (${(err as Error).message})`, {
      cause: err,
    });
  }
}
