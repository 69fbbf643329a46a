import pg from 'pg';
import { decodeJson, decodeText } from './text-escapes.js';

/** PostgreSQL type OIDs whose text `pg` would hand back otherwise than SQLite does. */
const INT8 = 20;
const NUMERIC = 1700;
const TIMESTAMPTZ = 1184;
const TEXT = 25;
const VARCHAR = 1043;
const JSON_ = 114;
const JSONB = 3802;

const timestamptz = pg.types.getTypeParser(TIMESTAMPTZ);

/**
 * Per-pool type parsers (never `pg.types.setTypeParser`, which is process-wide) that make rows look as they do on
 * SQLite: counts, sums and `bigint` ids as numbers, instants as the ISO text the kernel writes
 * (`2026-12-01T23:00:40.123Z`), JSON as its text so every `JSON.parse(row.data)` keeps working, and text and JSON
 * with what the store escaped on the way in (a NUL, an unpaired surrogate: `text-escapes.ts`) as it was written.
 *
 * @example
 * new pg.Pool({ connectionString: 'postgres://db/libos', types: sqliteLikeTypes as unknown as pg.CustomTypesConfig });
 */
export const sqliteLikeTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    switch (oid) {
      case INT8:
      case NUMERIC:
        return Number;
      case TIMESTAMPTZ:
        return (value) => (timestamptz(value) as Date).toISOString();
      case TEXT:
      case VARCHAR:
        return decodeText;
      case JSON_:
      case JSONB:
        return decodeJson;
      default:
        return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid);
    }
  },
} as const;
