import { LibosError } from '@libos/sdk';

/** Where a PostgreSQL store is: the server's connection string (without `schema`), its schema, and a printable name. */
export interface PostgresTarget {
  /** What `pg` connects with: the URL as given, less the `schema` parameter. */
  readonly connectionString: string;
  /** The schema the store's tables live in (`search_path` of every connection): `?schema=`, else `public`. */
  readonly schema: string;
  /** The URL without its password, with the schema: what errors and `rt.location` show. */
  readonly location: string;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Whether a store path names a PostgreSQL server (`postgres://` or `postgresql://`) rather than a SQLite file.
 *
 * @example
 * isPostgresUrl('postgres://app@db:5432/libos?schema=agents'); // true
 * isPostgresUrl('./.libos/libos.db');                          // false
 */
export const isPostgresUrl = (path: string): boolean => /^postgres(?:ql)?:\/\//i.test(path);

/**
 * Splits a store URL into what `pg` connects with, the schema (a lowercase SQL identifier, so it is used unquoted in
 * `search_path` and keys the writer lease), and the location shown to users (no password). A bad schema name is
 * `invalid_arguments` naming it.
 *
 * @example
 * postgresTarget('postgres://app:secret@db/libos?schema=agents');
 * // { connectionString: 'postgres://app:secret@db/libos', schema: 'agents', location: 'postgres://app@db/libos?schema=agents' }
 */
export function postgresTarget(path: string): PostgresTarget {
  let url: URL;
  try {
    url = new URL(path);
  } catch (err) {
    throw new LibosError('invalid_arguments', `path: ${redact(path)} is not a valid PostgreSQL URL (${(err as Error).message})`, {
      details: { field: 'path' },
      cause: err,
    });
  }
  const schema = url.searchParams.get('schema') ?? 'public';
  if (!SCHEMA_NAME.test(schema)) {
    throw new LibosError(
      'invalid_arguments',
      `path: schema ${JSON.stringify(schema)} must be a lowercase SQL name (a-z, 0-9, _; at most 63, not starting with a digit)`,
      { details: { field: 'schema', schema } },
    );
  }
  url.searchParams.delete('schema');
  const connectionString = url.toString();
  url.password = '';
  url.searchParams.set('schema', schema);
  return { connectionString, schema, location: url.toString() };
}

/** `path` with any password in it replaced, for messages about a URL that did not parse. */
const redact = (path: string) => path.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
