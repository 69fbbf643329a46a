import { afterEach } from 'vitest';
import { kernelMigrations } from '../../store/kernel-schema.js';
import { migrate } from '../../store/migrate.js';
import { openSqliteStore, type OpenedStore } from '../../store/sqlite/open-sqlite.js';

/**
 * For unit tests of one kernel table: an in-memory store with the kernel's migrations applied, closed after each test.
 * Call it at the top of a test file; each call of the returned function opens a fresh store.
 *
 * @example
 * const kernelStore = kernelStores();
 * it('...', async () => { const s = await kernelStore(); await s.db.selectFrom('events').selectAll().execute(); });
 */
export function kernelStores(): () => Promise<OpenedStore> {
  const open: OpenedStore[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });
  return async () => {
    const s = openSqliteStore(':memory:');
    open.push(s);
    await migrate(s.db, [{ owner: '@libos/kernel', migrations: kernelMigrations }], () => new Date(0).toISOString());
    return s;
  };
}
