import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REDO_DEFLATE_FROM, RedoLog } from './redo-log.js';

const dirs: string[] = [];
const logPath = () => {
  const dir = mkdtempSync(join(tmpdir(), 'libos-redo-'));
  dirs.push(dir);
  return join(dir, 'store.db-redo');
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const INSERT = 'insert into t (a, b) values (?, ?)';
const UPDATE = 'update t set b = ? where a = ?';

describe('redo log', () => {
  it('[K-9.7] gives back every unit as appended: SQL texts, strings, numbers, null, bigints and blobs', () => {
    const path = logPath();
    const log = RedoLog.open(path);
    const units = [
      { n: 1, statements: [{ sql: INSERT, params: ['x', 1.5] }] },
      {
        n: 2,
        statements: [
          { sql: UPDATE, params: [null, 'x'] },
          { sql: INSERT, params: [9007199254740993n, Buffer.from([0, 255, 7])] },
          { sql: INSERT, params: ['{"k":"a \\"quoted\\" ✓"}', -0.25] },
        ],
      },
    ];
    for (const u of units) log.append(u);
    log.close({ remove: false });
    expect(RedoLog.read(path)).toEqual(units);
  });

  it('[K-9.7] ends at a record a crash cut short, or one whose checksum fails', () => {
    const path = logPath();
    const log = RedoLog.open(path);
    log.append({ n: 1, statements: [{ sql: INSERT, params: ['a', 1] }] });
    const whole = log.bytes;
    log.append({ n: 2, statements: [{ sql: INSERT, params: ['b', 2] }] });
    log.close({ remove: false });
    const full = readFileSync(path);
    truncateSync(path, full.length - 3);
    expect(RedoLog.read(path).map((u) => u.n)).toEqual([1]);
    const flipped = Buffer.from(full);
    flipped[whole + 12] = flipped[whole + 12]! ^ 0xff; // a byte inside the second record's payload
    writeFileSync(path, flipped);
    expect(RedoLog.read(path).map((u) => u.n)).toEqual([1]);
  });

  it('[K-9.7] writes each SQL text once per log, and again after a reset empties it', () => {
    const path = logPath();
    const log = RedoLog.open(path);
    const unit = (n: number) => ({ n, statements: [{ sql: INSERT, params: ['v', n] }] });
    log.append(unit(1));
    log.append(unit(2));
    expect(readFileSync(path, 'utf8').split(INSERT).length - 1).toBe(1);
    log.reset();
    expect(log.bytes).toBe(0);
    log.append(unit(3));
    log.close({ remove: false });
    expect(RedoLog.read(path)).toEqual([unit(3)]);
  });

  it('[K-9.7] a record of 4 KB or more is stored deflated against the text before it; small ones, as they are', () => {
    const path = logPath();
    const log = RedoLog.open(path);
    // About 7 KB of record text: 100 rows of the same shape.
    const big = (n: number) => ({
      n,
      statements: Array.from({ length: 100 }, (_, i) => ({
        sql: INSERT,
        params: [`{"pid":"pid_${n}","row":${i},"note":"a repeated note"}`, i],
      })),
    });
    const small = (n: number) => ({ n, statements: [{ sql: UPDATE, params: [`v${n}`, 'x'] }] });
    const units = [small(1), big(2), small(3), big(4)];
    const sizes: number[] = [];
    for (const u of units) {
      const before = log.bytes;
      log.append(u);
      sizes.push(log.bytes - before);
    }
    expect(sizes[0]).toBe(readFileSync(path).readUInt32LE(0) + 8); // a small record: its length word is its text's length
    expect(sizes[1]).toBeLessThan(REDO_DEFLATE_FROM / 2);
    // The second big unit repeats the first: deflated against it, it is smaller still.
    expect(sizes[3]).toBeLessThan(sizes[1]!);
    log.close({ remove: false });
    expect(RedoLog.read(path)).toEqual(units);
    truncateSync(path, sizes[0]! + sizes[1]! + sizes[2]! + sizes[3]! - 5);
    expect(RedoLog.read(path).map((u) => u.n)).toEqual([1, 2, 3]);
  });

  it('[K-9.7] after a reset, a deflated record refers to no text from before it', () => {
    const path = logPath();
    const log = RedoLog.open(path);
    const big = (n: number) => ({
      n,
      statements: Array.from({ length: 300 }, (_, i) => ({ sql: INSERT, params: [`row ${i} of unit ${n}`, i] })),
    });
    log.append(big(1));
    log.reset();
    log.append(big(2));
    log.close({ remove: false });
    expect(RedoLog.read(path)).toEqual([big(2)]);
  });

  it('[K-9.7] no file reads as an empty log', () => {
    expect(RedoLog.read(join(tmpdir(), 'libos-no-such-dir', 'x.db-redo'))).toEqual([]);
  });
  /** About 7 KB of record text: 100 rows of the same shape (a streamed record), and one row (written as it is). */
  const big = (n: number) => ({
    n,
    statements: Array.from({ length: 100 }, (_, i) => ({ sql: INSERT, params: [`{"pid":"pid_${n}","row":${i},"note":"a note"}`, i] })),
  });
  const small = (n: number) => ({ n, statements: [{ sql: UPDATE, params: [`v${n}`, 'x'] }] });
  /** Each record's word (its first u32) and where the record starts. */
  const words = (path: string) => {
    const buf = readFileSync(path);
    const out: { at: number; word: number }[] = [];
    for (let at = 0; at < buf.length; ) {
      const word = buf.readUInt32LE(at);
      out.push({ at, word });
      const streamed = word < 0x8000_0000 && (word & 0x4000_0000) !== 0;
      at += streamed ? 12 + (word & 0x1fff_ffff) : 8 + word;
    }
    return out;
  };

  it('[K-9.18] big records are segments of one deflate stream, the first after an open or a reset marked as its start', () => {
    const path = logPath();
    const log = RedoLog.open(path);
    const units = [big(1), small(2), big(3), big(4)];
    for (const u of units) log.append(u);
    const flags = words(path).map(({ word }) =>
      word >= 0x8000_0000 ? 'legacy' : word & 0x4000_0000 ? (word & 0x2000_0000 ? 'start' : 'segment') : 'text',
    );
    expect(flags).toEqual(['start', 'text', 'segment', 'segment']);
    expect(RedoLog.read(path)).toEqual(units);
    // A segment continues the stream: it refers back to the big records before it and is far smaller than the first.
    const [first, , third] = words(path);
    expect(third!.word & 0x1fff_ffff).toBeLessThan(first!.word & 0x1fff_ffff);
    // A crash that cut the last segment short loses that unit only.
    truncateSync(path, readFileSync(path).length - 4);
    expect(RedoLog.read(path).map((u) => u.n)).toEqual([1, 2, 3]);
    log.reset();
    log.append(big(5));
    expect(words(path).map(({ word }) => (word & 0x2000_0000) !== 0)).toEqual([true]);
    log.close({ remove: false });
    expect(RedoLog.read(path)).toEqual([big(5)]);
  });

  it('[K-9.18] a stream that starts again mid-log (after a failed write) reads whole; a segment with no start is corrupt', () => {
    const a = logPath();
    const b = logPath();
    for (const [path, units] of [
      [a, [big(1), big(2)]],
      [b, [big(3), small(4), big(5)]],
    ] as const) {
      const log = RedoLog.open(path);
      for (const u of units) log.append(u);
      log.close({ remove: false });
    }
    const joined = logPath();
    writeFileSync(joined, Buffer.concat([readFileSync(a), readFileSync(b)]));
    expect(RedoLog.read(joined).map((u) => u.n)).toEqual([1, 2, 3, 4, 5]);
    const second = words(a)[1]!.at;
    writeFileSync(joined, readFileSync(a).subarray(second));
    expect(() => RedoLog.read(joined)).toThrow(expect.objectContaining({ code: 'store_corrupt' }));
    // A segment of another stream read as this one's continuation inflates to nonsense: corrupt, not a crash.
    writeFileSync(joined, Buffer.concat([readFileSync(b), readFileSync(a).subarray(second)]));
    expect(() => RedoLog.read(joined)).toThrow(expect.objectContaining({ code: 'store_corrupt' }));
  });

  it('[K-9.18] a log written before streams (records deflated on their own against the text before them) still reads', () => {
    const path = logPath();
    const text = (n: number, defs: [number, string][]) =>
      Buffer.from(JSON.stringify({ n, d: defs, s: Array.from({ length: 50 }, (_, i) => [0, [`row ${i}`, i]]) }));
    const first = text(1, [[0, INSERT]]);
    const second = text(2, []);
    const frame = (payload: Buffer, deflated: boolean) => {
      const header = Buffer.alloc(8);
      header.writeUInt32LE(payload.length + (deflated ? 0x8000_0000 : 0), 0);
      header.writeUInt32LE(crc32(payload), 4);
      return Buffer.concat([header, payload]);
    };
    const packed = deflateRawSync(second, { level: 1, dictionary: first });
    writeFileSync(path, Buffer.concat([frame(first, false), frame(packed, true)]));
    const rows = Array.from({ length: 50 }, (_, i) => ({ sql: INSERT, params: [`row ${i}`, i] }));
    expect(RedoLog.read(path)).toEqual([
      { n: 1, statements: rows },
      { n: 2, statements: rows },
    ]);
  });
});
