import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Migration } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import type { KernelDatabase } from './kernel-database.js';
import { kernelMigrations } from './kernel-schema.js';
import { migrate } from './migrate.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = () => '2026-01-01T00:00:00.000Z';
const boom: Migration = {
  name: '0002_boom',
  async up() {
    throw new Error('boom');
  },
};

/** Runs `migrate` on a fresh store file, then returns what the file holds (closed in between: nothing cached). */
async function migrateFresh(sets: Parameters<typeof migrate>[1]) {
  dir = mkdtempSync(join(tmpdir(), 'libos-migrate-'));
  const path = join(dir, 'libos.db');
  const db = new Kysely<KernelDatabase>({ dialect: new SqliteDialect({ database: new Database(path) }) });
  const outcome = await migrate(db, sets, at).then(
    () => null,
    (err: unknown) => err,
  );
  await db.destroy();
  const file = new Database(path, { readonly: true });
  const tables = (file.prepare(`select name from sqlite_master where type = 'table' order by name`).all() as { name: string }[]).map(
    (r) => r.name,
  );
  const applied = tables.includes('libos_migrations')
    ? (file.prepare('select owner, name from libos_migrations order by owner, name').all() as { owner: string; name: string }[])
    : [];
  file.close();
  return { outcome, tables, applied };
}

describe('migrate', () => {
  it('[K-15.2] a migration that throws on a fresh store leaves the file with no tables, not even the bookkeeping', async () => {
    const { outcome, tables } = await migrateFresh([{ owner: '@libos/kernel', migrations: [kernelMigrations[0]!, boom] }]);
    expect(outcome).toMatchObject({ code: 'internal_error', message: expect.stringContaining('@libos/kernel/0002_boom failed: boom') });
    expect(tables).toEqual([]);
  });

  it('[K-15.2] a throw in a later set keeps the sets before it, each committed with its bookkeeping', async () => {
    const { outcome, tables, applied } = await migrateFresh([
      { owner: '@libos/kernel', migrations: kernelMigrations.slice(0, 1) },
      { owner: 'plugin-x', migrations: [boom] },
    ]);
    expect(outcome).toMatchObject({ code: 'internal_error' });
    expect(tables).toEqual(expect.arrayContaining(['libos_meta', 'libos_migrations', 'processes', 'events']));
    expect(applied).toEqual([{ owner: '@libos/kernel', name: '0001_kernel_core' }]);
  });
});
