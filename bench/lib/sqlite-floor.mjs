// The floors: what raw SQLite costs on a connection set up like the kernel's store (locking_mode EXCLUSIVE,
// journal_mode WAL, synchronous NORMAL), with prepared statements and better-sqlite3's transaction wrapper.
import { readFileSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';

/** A 1 KB value (1,024 ASCII characters). */
export const ONE_KB = 'x'.repeat(1024);

/** Opens `path` with the kernel store's pragmas. `autocheckpoint: false` keeps every WAL frame (WAL byte counts). */
export function openFloorDb(path, { autocheckpoint = true } = {}) {
  const db = new Database(path);
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  if (!autocheckpoint) db.pragma('wal_autocheckpoint = 0');
  return db;
}

/**
 * One raw prepared 1 KB insert in its own transaction. Returns `{ op, close }`.
 *
 * @example
 * const floor = insertFloor('/tmp/floor.db'); floor.op(); floor.close();
 */
export function insertFloor(path) {
  const db = openFloorDb(path);
  db.exec('create table if not exists t (id integer primary key, k text not null, v text not null)');
  const ins = db.prepare('insert into t (k, v) values (?, ?)');
  let i = 0;
  const tx = db.transaction(() => ins.run(`k${i++}`, ONE_KB));
  return { op: () => tx(), close: () => db.close() };
}

/**
 * The hand-written durable agent loop, one step: three prepared inserts in one transaction (the model's tool call,
 * the tool's result, the model's final answer; 1 KB each). `walBytes()` is the size of the WAL file so far.
 */
export function handLoop(path, { autocheckpoint = true } = {}) {
  const db = openFloorDb(path, { autocheckpoint });
  db.exec('create table if not exists steps (id integer primary key, run text not null, kind text not null, body text not null)');
  const ins = db.prepare('insert into steps (run, kind, body) values (?, ?, ?)');
  let i = 0;
  const tx = db.transaction(() => {
    const run = `run${i++}`;
    ins.run(run, 'model_call', ONE_KB);
    ins.run(run, 'tool_result', ONE_KB);
    ins.run(run, 'model_answer', ONE_KB);
  });
  return { op: () => tx(), walBytes: () => walBytes(path), close: () => db.close() };
}

/** Size of the WAL file of the store at `path` (0 when there is none). */
export function walBytes(path) {
  try {
    return statSync(`${path}-wal`).size;
  } catch (err) {
    if (err.code === 'ENOENT') return 0;
    throw err;
  }
}

/**
 * Bytes this process has handed to write()/pwrite() so far (`wchar` of /proc/self/io, Linux): the WAL frames SQLite
 * writes, libOS's redo log and anything else, counted the same way for every side.
 */
export function bytesWritten() {
  const m = /^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  if (!m) throw new Error('bytesWritten: no wchar line in /proc/self/io');
  return Number(m[1]);
}
