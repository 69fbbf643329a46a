import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LibosError } from '@libos/sdk';
import { openRuntime, type Runtime } from '../../runtime.js';
import { kernelMigrations } from '../kernel-schema.js';
import { storeFault } from './store-faults.js';

// Store faults have codes of their own, each naming the file: a path that is not a libOS store is refused before
// anything is written; a fault met later (full disk, corruption) surfaces with its code from every call, and the
// ROLLBACK that follows a failed write never hides it.

const open: Runtime[] = [];
let dir: string;
/** A closed libOS store with one process in it, to copy. */
let good: string;
let pid: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'libos-store-faults-'));
  good = join(dir, 'good.db');
  const rt = await openRuntime({ path: good });
  pid = (await rt.spawn({ goal: 'keep going' })).pid;
  await rt.close();
  return () => rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
});

async function runtimeAt(path: string, maxStorePages?: number): Promise<Runtime> {
  const rt = await openRuntime({ path, ...(maxStorePages !== undefined ? { maxStorePages } : {}) });
  open.push(rt);
  return rt;
}

/** A copy of the good store, changed by `edit`. */
function storeCopy(name: string, edit: (path: string) => void = () => {}): string {
  const path = join(dir, name);
  copyFileSync(good, path);
  edit(path);
  return path;
}

/** Opening `path` fails with `code`, in a message naming the file that says `text`. */
async function expectRefused(path: string, code: string, text: RegExp): Promise<LibosError> {
  const err = await openRuntime({ path }).then(
    async (rt) => {
      await rt.close();
      throw new Error(`${path} opened`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LibosError);
  expect((err as LibosError).toJSON()).toMatchObject({ code, message: expect.stringContaining(path) });
  expect((err as LibosError).message).toMatch(text);
  expect((err as LibosError).message).not.toContain('\n');
  return err as LibosError;
}

/**
 * A copy (`name`) of the database at `source` as a writer killed mid-transaction leaves it: pages of an unfinished
 * transaction (many `insert` rows) already in the file, its rollback journal beside it. Made by copying both files
 * while the transaction is open (a small page cache makes SQLite spill the pages before COMMIT).
 */
function withHotJournal(source: string, name: string, insert: string): string {
  const scratch = join(dir, `writer-${name}`);
  copyFileSync(source, scratch);
  const writer = new Database(scratch);
  writer.pragma('journal_mode = DELETE');
  writer.pragma('cache_size = 2');
  writer.exec('BEGIN');
  const row = writer.prepare(insert);
  for (let i = 0; i < 2000; i++) row.run(`unfinished-${i}`, 'y'.repeat(500));
  const path = join(dir, name);
  copyFileSync(scratch, path);
  copyFileSync(`${scratch}-journal`, `${path}-journal`);
  writer.exec('ROLLBACK');
  writer.close();
  return path;
}

describe('store faults', () => {
  it('[K-8.7] a garbage file is store_corrupt naming the file', async () => {
    const path = join(dir, 'garbage.db');
    writeFileSync(path, Buffer.alloc(8192, 0x5a));
    await expectRefused(path, 'store_corrupt', /is not a SQLite database/);
    expect(readFileSync(path)).toEqual(Buffer.alloc(8192, 0x5a));
  });

  it('[K-8.7] a truncated store is store_corrupt naming the file', async () => {
    for (const keep of [0.5, 0.1]) {
      const path = storeCopy(`truncated-${keep}.db`, (p) => truncateSync(p, Math.floor(statSync(p).size * keep)));
      await expectRefused(path, 'store_corrupt', /is corrupt \(SQLITE_CORRUPT/);
    }
  });

  it('[K-8.7] a directory is not_a_libos_store naming it', async () => {
    const path = join(dir, 'a-folder.db');
    mkdirSync(path);
    await expectRefused(path, 'not_a_libos_store', /is a directory/);
    expect(readdirSync(path)).toEqual([]);
  });

  it('[K-8.7] a deleted migration row is store_corrupt naming the missing migration; nothing is run', async () => {
    const middle = storeCopy('no-0003.db', (p) =>
      new Database(p).exec(`DELETE FROM libos_migrations WHERE name = '0003_message_fields'`).close(),
    );
    const e = await expectRefused(
      middle,
      'store_corrupt',
      /migration @libos\/kernel\/0003_message_fields is missing from libos_migrations/,
    );
    expect(e.details).toMatchObject({ missing: '@libos/kernel/0003_message_fields' });
    const lastName = kernelMigrations[kernelMigrations.length - 1]!.name;
    const last = storeCopy('no-last.db', (p) => {
      const db = new Database(p);
      db.prepare(`DELETE FROM libos_migrations WHERE name = ?`).run(lastName);
      db.close();
    });
    await expectRefused(
      last,
      'store_corrupt',
      new RegExp(`migration @libos/kernel/${lastName} is missing from libos_migrations, yet its schema is in the store`),
    );
    const rows = new Database(last, { readonly: true });
    expect(rows.prepare(`SELECT count(*) AS n FROM libos_migrations WHERE name = ?`).get(lastName)).toEqual({ n: 0 });
    rows.close();
  });

  it('[K-8.7] a SQLite file of another application is refused and left byte for byte as it was, mode and all', async () => {
    const path = join(dir, 'notes-app.db');
    const other = new Database(path);
    other.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')`);
    other.close();
    chmodSync(path, 0o644);
    const bytes = readFileSync(path);
    const files = readdirSync(dir).sort();
    const e = await expectRefused(path, 'not_a_libos_store', /another application \(tables: notes; no libos_meta\)/);
    expect(e.category).toBe('invalid_argument');
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir).sort()).toEqual(files); // no -wal, -shm or -journal left beside it
  });

  it('[K-8.7] a store a writer was killed in mid-transaction (a hot journal) opens, the unfinished transaction undone', async () => {
    const path = withHotJournal(good, 'killed-mid-write.db', `INSERT INTO libos_meta (key, value) VALUES (?, ?)`);
    const rt = await runtimeAt(path);
    expect((await rt.processes()).map((p) => p.pid)).toEqual([pid]);
    await rt.close();
    open.length = 0;
    const rows = new Database(path, { readonly: true });
    expect(rows.prepare(`SELECT count(*) AS n FROM libos_meta WHERE key LIKE 'unfinished-%'`).get()).toEqual({ n: 0 });
    rows.close();
  });

  it('[K-8.7] a SQLite file of another application with a hot journal is still refused', async () => {
    const source = join(dir, 'notes-source.db');
    new Database(source).exec(`CREATE TABLE notes (key TEXT, value TEXT)`).close();
    const path = withHotJournal(source, 'notes-killed.db', `INSERT INTO notes (key, value) VALUES (?, ?)`);
    await expectRefused(path, 'not_a_libos_store', /another application \(tables: notes; no libos_meta\)/);
  });

  it('[K-8.7] on a full disk a write is disk_full naming the file (never the rollback error); reads still work', async () => {
    const path = storeCopy('full.db');
    const pages = statSync(path).size / 4096;
    const rt = await runtimeAt(path, pages);
    expect((await rt.processes()).map((p) => p.pid)).toEqual([pid]);
    const events = (await rt.events()).length;
    const err = await rt.sendMessage(pid, { text: 'x'.repeat(60_000) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LibosError);
    expect((err as LibosError).toJSON()).toMatchObject({
      code: 'disk_full',
      category: 'resource_exhausted',
      message: expect.stringContaining(path),
      details: { path, sqlite_code: 'SQLITE_FULL' },
    });
    expect((err as LibosError).message).not.toMatch(/rollback/i);
    await expect(rt.spawn({ goal: 'y'.repeat(30_000) })).rejects.toMatchObject({ code: 'disk_full' });
    // Nothing of the failed writes is there, and the store still answers.
    expect(await rt.messages(pid)).toEqual([]);
    expect((await rt.processes()).map((p) => p.pid)).toEqual([pid]);
    expect(await rt.events()).toHaveLength(events);
  });

  it('[K-8.7] SQLite fault codes map to their own codes; any other SQLite error is left as it is', () => {
    const path = storeCopy('read-only.db');
    const ro = new Database(path, { readonly: true });
    let readOnlyErr: unknown;
    try {
      ro.exec(`INSERT INTO libos_meta (key, value) VALUES ('k', 'v')`);
    } catch (e) {
      readOnlyErr = e;
    } finally {
      ro.close();
    }
    expect(storeFault(readOnlyErr, path)?.toJSON()).toMatchObject({
      code: 'store_read_only',
      category: 'unavailable',
      details: { path, sqlite_code: 'SQLITE_READONLY' },
    });
    const fake = (code: string) => Object.assign(new Error('x'), { code });
    expect(storeFault(fake('SQLITE_FULL'), path)?.code).toBe('disk_full');
    expect(storeFault(fake('SQLITE_CORRUPT_INDEX'), path)?.code).toBe('store_corrupt');
    expect(storeFault(fake('SQLITE_NOTADB'), path)?.code).toBe('store_corrupt');
    expect(storeFault(fake('SQLITE_CONSTRAINT_UNIQUE'), path)).toBeUndefined();
    expect(storeFault(fake('SQLITE_FULLY'), path)).toBeUndefined();
    expect(storeFault(new Error('plain'), path)).toBeUndefined();
  });
});
