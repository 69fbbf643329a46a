// Stores with history, made fast and in the kernel's real schema: a small template is written through the public
// API (real agent steps on the scheduler), then its rows are cloned with SQL into as many copies as needed. Every id
// inside every text value (`<prefix>_<hex>`, in columns and inside JSON) is remapped per copy by a bijection, so a
// copy is a consistent set of processes with their events, audit, grants, accounts, Objects and model calls.
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openBenchRuntime, prepareStep, runStep } from './libos.mjs';

/** The tables a bench counts as history rows. */
export const HISTORY_TABLES = ['processes', 'events', 'audit_records'];

const ID = /\b([a-z][a-z0-9]*)_([0-9a-f]{12,40})(?![0-9a-z])/g;

/** Per-copy hex-digit masks (xorshift32 from the copy number): XOR with a fixed mask is a bijection on ids. */
function maskOf(k, cache) {
  let m = cache.get(k);
  if (m) return m;
  let x = (k * 0x9e3779b1) >>> 0 || 1;
  m = [];
  for (let i = 0; i < 40; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    m.push(x & 15);
  }
  cache.set(k, m);
  return m;
}

function remapper() {
  const cache = new Map();
  return (value, k) => {
    if (typeof value !== 'string' || k === 0) return value;
    const mask = maskOf(k, cache);
    return value.replace(ID, (_, prefix, hex) => {
      let out = '';
      for (let i = 0; i < hex.length; i++) out += (parseInt(hex[i], 16) ^ mask[i]).toString(16);
      return `${prefix}_${out}`;
    });
  };
}

function tableNames(db) {
  return db
    .prepare("select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%'")
    .all()
    .map((t) => {
      if (/without\s+rowid/i.test(t.sql ?? '')) {
        throw new Error(`history-store: table ${t.name} is WITHOUT ROWID; the cloner copies rows by rowid`);
      }
      return t.name;
    });
}

function maxRowids(path) {
  const db = new Database(path, { readonly: true });
  try {
    return Object.fromEntries(tableNames(db).map((t) => [t, db.prepare(`select coalesce(max(rowid), 0) m from "${t}"`).get().m]));
  } finally {
    db.close();
  }
}

/** Copies the SQLite store at `from` (with its WAL and redo log, if left) to `to`, replacing whatever was there. */
export function copyStore(from, to) {
  for (const suffix of ['', '-wal', '-shm', '-redo']) rmSync(`${to}${suffix}`, { force: true });
  copyFileSync(from, to);
  for (const suffix of ['-wal', '-redo']) if (existsSync(`${from}${suffix}`)) copyFileSync(`${from}${suffix}`, `${to}${suffix}`);
  return to;
}

/** Rows of `HISTORY_TABLES` in the store at `path`. */
export function historyRows(path) {
  const db = new Database(path, { readonly: true });
  try {
    return HISTORY_TABLES.reduce((n, t) => n + db.prepare(`select count(*) c from "${t}"`).get().c, 0);
  } finally {
    db.close();
  }
}

/**
 * Writes the template: a fresh store where `steps` root processes each ran one agent step to `process_exit` through
 * the scheduler. Returns `{ path, processes, rows, ranges }` (`ranges`: per table, the rowids the steps wrote).
 */
export async function buildTemplate(path, steps) {
  const rt = await openBenchRuntime(path);
  await rt.close();
  const before = maxRowids(path);
  const rt2 = await openBenchRuntime(path);
  try {
    for (let i = 0; i < steps; i++) await runStep(rt2, await prepareStep(rt2));
  } finally {
    await rt2.close();
  }
  const after = maxRowids(path);
  const ranges = Object.fromEntries(
    Object.keys(after)
      .filter((t) => after[t] > (before[t] ?? 0))
      .map((t) => [t, [(before[t] ?? 0) + 1, after[t]]]),
  );
  return { path, processes: steps, rows: historyRows(path), ranges };
}

/**
 * Tables not cloned per copy: keyed by their content's hash (one row serves every process that wrote the same
 * content), or the store's own metadata (`libos_meta`, e.g. the last unit the redo log committed).
 */
const CONTENT_ADDRESSED = new Set(['llm_texts', 'libos_meta']);

/**
 * Copies the template to `out` and adds `copies` clones of its step rows (so `out` holds (copies + 1) times the
 * template's processes). Integer primary keys are renumbered; ids in text are remapped per copy.
 */
export function cloneTemplate(template, out, copies) {
  copyStore(template.path, out);
  if (copies === 0) return out;
  const db = new Database(out);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.function('bench_remap', { deterministic: true }, remapper());
    db.exec('create temp table bench_copies (k integer primary key)');
    const addK = db.prepare('insert into bench_copies (k) values (?)');
    db.transaction(() => {
      for (let k = 1; k <= copies; k++) addK.run(k);
    })();
    db.transaction(() => {
      for (const [table, [lo, hi]] of Object.entries(template.ranges)) {
        // Content-addressed rows (a prompt paragraph by its sha256) are shared by every copy, as in a real store.
        if (CONTENT_ADDRESSED.has(table)) continue;
        const cols = db.prepare(`pragma table_info("${table}")`).all();
        const pks = cols.filter((c) => c.pk > 0);
        const rowidAlias = pks.length === 1 && pks[0].type.toUpperCase() === 'INTEGER' ? pks[0].name : null;
        const names = cols.map((c) => `"${c.name}"`).join(', ');
        const exprs = cols.map((c) => (c.name === rowidAlias ? 'null' : `bench_remap(t."${c.name}", c.k)`)).join(', ');
        const from = `from bench_copies c cross join "${table}" t where t.rowid between ? and ?`;
        db.prepare(`insert into "${table}" (${names}) select ${exprs} ${from}`).run(lo, hi);
      }
    })();
  } finally {
    db.close();
  }
  return out;
}
