import { LibosError } from '@libos/sdk';
import type pg from 'pg';
import { STORE_MARKER_TABLE } from '../sqlite/open-sqlite.js';
import type { PostgresTarget } from './postgres-url.js';

/** Collations under which `order by` on text keys (pids, oids, task ids) is byte order, as on SQLite. */
const BYTE_ORDER_COLLATIONS = /^(?:C|POSIX|C\.UTF-?8|ucs_basic)$/i;

/**
 * Refuses, before anything is written, a PostgreSQL store libOS must not write: a database whose collation does not
 * sort text byte-wise (every listing's order would differ from SQLite's) is `invalid_arguments`; a schema with
 * tables but no `libos_meta` (another application's) is `not_a_libos_store`. A missing or empty schema is a new
 * store. Reads through the lease's session only.
 */
export async function assertLibosSchema(client: pg.Client, target: PostgresTarget): Promise<void> {
  const { rows: db } = await client.query<{ collate: string }>(
    'select datcollate as collate from pg_database where datname = current_database()',
  );
  const collate = db[0]?.collate ?? '';
  if (!BYTE_ORDER_COLLATIONS.test(collate)) {
    throw new LibosError(
      'invalid_arguments',
      `path: database of ${target.location} collates text as ${collate}; libOS orders ids byte-wise: use a database created ` +
        `with LC_COLLATE 'C' (createdb --locale=C.UTF-8 --template=template0)`,
      { details: { field: 'path', collation: collate } },
    );
  }
  const { rows } = await client.query<{ name: string }>(
    'select table_name as name from information_schema.tables where table_schema = $1 order by table_name',
    [target.schema],
  );
  const tables = rows.map((r) => r.name);
  if (tables.length > 0 && !tables.includes(STORE_MARKER_TABLE)) {
    const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, … (${tables.length} tables)` : '');
    throw new LibosError(
      'not_a_libos_store',
      `store ${target.location} is a schema of another application (tables: ${shown}; no ${STORE_MARKER_TABLE}); ` +
        'libOS leaves it unchanged: pass another ?schema= or a libOS store',
      { details: { path: target.location, tables: tables.slice(0, 20) } },
    );
  }
}
