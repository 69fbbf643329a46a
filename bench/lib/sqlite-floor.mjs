// The floors: what raw SQLite costs on a connection set up like the kernel's store (locking_mode EXCLUSIVE,
// journal_mode WAL, synchronous NORMAL), with prepared statements and better-sqlite3's transaction wrapper.
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
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

/** What a checked `get_current_time` call writes, by row: its events' `data` and its audit rows' `details` lengths. */
const CALL_EVENT_BYTES = [90, 94, 172, 173]; // tool_called, resource.charged, external_read, tool_completed
const CALL_AUDIT_BYTES = [434, 81, 86, 215]; // capability.authorize, resource.charge, primitive.clock.now, tool.call

/**
 * The rows a checked call must write, hand-written: its budget account's compare-and-set update, its 4 event rows
 * and its 4 audit rows (one multi-row insert each), in tables shaped and indexed like the kernel's. `ownTx` runs them
 * in a transaction of their own (as the 1 KB insert floor does); `grouped` as the kernel's group commit does (K-9.7):
 * in a savepoint inside a batch, with one ~2 KB redo-log write each, the batch committed every 256. What the contract
 * itself costs, with no runtime around it: the floor under `call_checked_vs_insert`.
 */
export function callWritesFloor(path) {
  const db = openFloorDb(path);
  db.exec(`create table if not exists events (seq integer primary key, id text not null, ts text not null, pid text,
      type text not null, data text not null);
    create index if not exists events_by_pid on events (pid, seq);
    create table if not exists audit_records (seq integer primary key, id text not null, ts text not null,
      actor text not null, action text not null, target text, decision text, call_id text, details text not null);
    create index if not exists audit_by_actor on audit_records (actor);
    create table if not exists accounts (pid text primary key, usage text not null, reserved text not null);
    insert or ignore into accounts values ('pid_1', '{"tool_calls":0}', '{}');`);
  const rows = (n, cols) => Array.from({ length: n }, () => `(${Array(cols).fill('?').join(', ')})`).join(', ');
  const events = db.prepare(`insert into events (id, ts, pid, type, data) values ${rows(4, 5)}`);
  const audit = db.prepare(`insert into audit_records (id, ts, actor, action, target, decision, call_id, details) values ${rows(4, 8)}`);
  const account = db.prepare('update accounts set usage = ?, reserved = ? where pid = ? and usage = ? and reserved = ?');
  let n = Number(db.prepare("select json_extract(usage, '$.tool_calls') as n from accounts").get().n);
  const write = () => {
    const ts = new Date().toISOString();
    account.run(`{"tool_calls":${n + 1}}`, '{}', 'pid_1', `{"tool_calls":${n}}`, '{}');
    n++;
    events.run(CALL_EVENT_BYTES.flatMap((b, i) => [`evt_${n}_${i}`, ts, 'pid_1', 'tool_called', 'd'.repeat(b)]));
    audit.run(CALL_AUDIT_BYTES.flatMap((b, i) => [`aud_${n}_${i}`, ts, 'pid_1', 'tool.call', 'tool:x', 'ok', `call_${n}`, 'a'.repeat(b)]));
  };
  const ownTx = db.transaction(write);
  const log = openSync(`${path}-redo`, 'w');
  const record = Buffer.alloc(2048, 120);
  const [begin, savepoint, release, commit] = ['begin', 'savepoint u', 'release u', 'commit'].map((q) => db.prepare(q));
  let batched = 0;
  const grouped = () => {
    if (batched === 0) begin.run();
    savepoint.run();
    write();
    writeSync(log, record);
    release.run();
    if (++batched === 256) {
      commit.run();
      batched = 0;
    }
  };
  const close = () => {
    if (batched > 0) commit.run();
    closeSync(log);
    db.close();
  };
  return { ownTx: () => ownTx(), grouped, close };
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
