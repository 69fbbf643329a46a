import { isLibosError, LibosError, type Migration, type MigrationKit } from '@libos/sdk';
import { KERNEL_SCHEMA_VERSION } from './kernel-schema.js';
import type { KernelStore } from './kernel-database.js';
import { migrationKit, type DialectMigrationKit } from './migration-kit.js';

/** A named group of migrations (the kernel's, the authority engine's, each plugin's). */
export interface MigrationSet {
  readonly owner: string;
  readonly migrations: readonly Migration[];
}

/** A migration's key in the applied set. */
const key = (owner: string, name: string) => `${owner}\u0000${name}`;

/** A migration's `up` met schema that is already there: its libos_migrations row is gone, not its tables. */
const ALREADY_APPLIED = /already exists|duplicate column name/i;

const corrupt = (location: string, owner: string, name: string, why: string) => {
  const missing = `migration ${owner}/${name} is missing from libos_migrations, ${why}`;
  return new LibosError('store_corrupt', `store ${location} is corrupt: ${missing}; restore the store from a backup`, {
    details: { path: location, missing: `${owner}/${name}` },
  });
};

/**
 * Checks the schema version, then runs every migration not yet applied, in order, each group in its own
 * transaction. A store written by a different kernel schema version is refused. Applied migrations of a group
 * are always a prefix of it: a missing row before an applied one, or a pending migration whose schema is already
 * there, is `store_corrupt` naming it (nothing is run). `location` names the store in errors; `kit` is the
 * store's dialect (each migration gets it bound to its transaction).
 *
 * The bookkeeping (`libos_meta`, `libos_migrations`, `schema_version`) is written in the first transaction, with the
 * first group that has pending migrations: a first open whose migration throws leaves nothing behind (K-15.2).
 */
export async function migrate(
  db: KernelStore,
  sets: readonly MigrationSet[],
  now: () => string,
  location = 'store',
  kit: DialectMigrationKit = migrationKit('sqlite'),
): Promise<void> {
  const pendingOf = (set: MigrationSet, applied: ReadonlySet<string>) => set.migrations.filter((m) => !applied.has(key(set.owner, m.name)));
  const run = async (trx: KernelStore, set: MigrationSet, pending: readonly Migration[]) => {
    const bound = kit.forStore(trx);
    for (const m of pending) {
      try {
        await m.up(trx, bound);
      } catch (err) {
        if (isLibosError(err)) throw err;
        const msg = (err as Error).message;
        if (ALREADY_APPLIED.test(msg)) throw corrupt(location, set.owner, m.name, `yet its schema is in the store (${msg})`);
        throw new LibosError('internal_error', `migration ${set.owner}/${m.name} failed: ${msg}`, { cause: err });
      }
      await trx.insertInto('libos_migrations').values({ owner: set.owner, name: m.name, applied_at: now() }).execute();
    }
  };
  const applied = await db.transaction().execute(async (trx) => {
    const done = await bookkeeping(trx, kit.forStore(trx), location, sets);
    const first = sets.find((set) => pendingOf(set, done).length > 0);
    if (first) await run(trx, first, pendingOf(first, done));
    return { done, first };
  });
  for (const set of sets) {
    if (set === applied.first) continue;
    const pending = pendingOf(set, applied.done);
    if (pending.length > 0) await db.transaction().execute((trx) => run(trx, set, pending));
  }
}

/**
 * Creates the bookkeeping tables when missing, refuses another schema version, records this one on a fresh store,
 * and checks that each group's applied migrations are a prefix of it. Returns the applied `owner\0name` keys.
 */
async function bookkeeping(trx: KernelStore, kit: MigrationKit, location: string, sets: readonly MigrationSet[]): Promise<Set<string>> {
  await trx.schema
    .createTable('libos_meta')
    .ifNotExists()
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await trx.schema
    .createTable('libos_migrations')
    .ifNotExists()
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applied_at', kit.types.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('libos_migrations_pk', ['owner', 'name'])
    .execute();
  const row = await trx.selectFrom('libos_meta').select('value').where('key', '=', 'schema_version').executeTakeFirst();
  if (row && Number(row.value) !== KERNEL_SCHEMA_VERSION) {
    throw new LibosError(
      'schema_version_mismatch',
      `store schema_version is ${row.value}, this kernel reads ${KERNEL_SCHEMA_VERSION}; open it with a matching libOS version`,
      {
        details: { found: row.value, expected: KERNEL_SCHEMA_VERSION },
      },
    );
  }
  if (!row)
    await trx
      .insertInto('libos_meta')
      .values({ key: 'schema_version', value: String(KERNEL_SCHEMA_VERSION) })
      .execute();
  const applied = new Set((await trx.selectFrom('libos_migrations').select(['owner', 'name']).execute()).map((r) => key(r.owner, r.name)));
  for (const set of sets) {
    const done = set.migrations.map((m) => applied.has(key(set.owner, m.name)));
    const gap = done.findIndex((d, i) => !d && done.indexOf(true, i + 1) !== -1);
    if (gap !== -1) {
      const later = set.migrations[done.lastIndexOf(true)]!.name;
      throw corrupt(location, set.owner, set.migrations[gap]!.name, `yet ${set.owner}/${later} after it is applied`);
    }
  }
  return applied;
}
