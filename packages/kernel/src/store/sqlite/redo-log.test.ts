import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
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
});
