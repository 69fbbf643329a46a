import { MIGRATION_TYPES, type LeanAppendShape, type MigrationKit } from './migration-kit.js';

/**
 * The migration kit of a SQLite store, over the kysely handle `db` the migration runs on (the kernel hands it to every
 * migration of a SQLite store; a plugin's tests can run their migrations with it, no kernel needed). It writes exactly
 * the DDL that migrations wrote before the kit existed. Kysely is driven through `db`, so the sdk needs no kysely.
 *
 * @example
 * import type { Migration } from '@libos/sdk';
 * declare const migrations: readonly Migration[], db: unknown; // a plugin's migrations, a Kysely over better-sqlite3
 * for (const m of migrations) await m.up(db, sqliteMigrationKit(db));
 */
export function sqliteMigrationKit(db: unknown): MigrationKit {
  return {
    dialect: 'sqlite',
    types: MIGRATION_TYPES.sqlite,
    seq: <C>(col: C): C => (col as any).primaryKey().autoIncrement(),
    leanAppendTable: (table, shape) => rebuildLean(db as any, table, shape),
  };
}

/**
 * SQLite cannot drop a unique constraint or AUTOINCREMENT from a live table: rebuild it as `seq integer primary key`
 * (the row id) with `shape.columns`, rows and `seq` copied in order, its indexes created on the new table before the
 * old one is dropped, so running this again on a rebuilt store fails (`already exists`) as every applied migration does.
 */
async function rebuildLean(db: any, table: string, shape: LeanAppendShape): Promise<void> {
  const next = `${table}_next`;
  let create = db.schema.createTable(next).addColumn('seq', 'integer', (c: any) => c.primaryKey());
  for (const c of shape.columns) create = create.addColumn(c.name, c.type, (d: any) => (c.notNull ? d.notNull() : d));
  await create.execute();
  for (const i of shape.indexes)
    await db.schema
      .createIndex(i.name)
      .on(next)
      .columns([...i.columns])
      .execute();
  const columns = ['seq', ...shape.columns.map((c) => c.name)];
  await db.insertInto(next).columns(columns).expression(db.selectFrom(table).select(columns).orderBy('seq')).execute();
  await db.schema.dropTable(table).execute();
  await db.schema.alterTable(next).renameTo(table).execute();
}
