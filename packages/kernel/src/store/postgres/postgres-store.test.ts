// The PostgreSQL adapter's pure parts, no server needed: the URL, the row types, the SQLSTATE faults.
import { describe, expect, it } from 'vitest';
import { connectError, postgresFault } from './postgres-faults.js';
import { isPostgresUrl, postgresTarget } from './postgres-url.js';
import { sqliteLikeTypes } from './row-types.js';

describe('PostgreSQL store helpers', () => {
  it('[K-15.4] a postgres:// or postgresql:// path is a server; the schema comes from ?schema=, the password never shows', () => {
    expect(isPostgresUrl('postgres://db/libos')).toBe(true);
    expect(isPostgresUrl('POSTGRESQL://db/libos')).toBe(true);
    expect(isPostgresUrl('./.libos/libos.db')).toBe(false);
    expect(isPostgresUrl(':memory:')).toBe(false);
    expect(postgresTarget('postgres://app:secret@db:5432/libos?schema=agents&sslmode=disable')).toEqual({
      connectionString: 'postgres://app:secret@db:5432/libos?sslmode=disable',
      schema: 'agents',
      location: 'postgres://app@db:5432/libos?sslmode=disable&schema=agents',
    });
    expect(postgresTarget('postgres://db/libos').schema).toBe('public');
  });

  it('[K-15.6] a schema that is not a lowercase SQL name is invalid_arguments naming it', () => {
    for (const bad of ['Agents', 'a-b', '1st', 'x'.repeat(64), 'a;drop'])
      expect(() => postgresTarget(`postgres://db/libos?schema=${encodeURIComponent(bad)}`)).toThrow(
        expect.objectContaining({ code: 'invalid_arguments', message: expect.stringContaining('schema') }),
      );
  });

  it('[K-15.4] rows read as on SQLite: int8 and numeric as numbers, timestamptz as ISO text, jsonb as its text', () => {
    expect(sqliteLikeTypes.getTypeParser(20)('9007199254740991')).toBe(9007199254740991);
    expect(sqliteLikeTypes.getTypeParser(1700)('3')).toBe(3);
    expect(sqliteLikeTypes.getTypeParser(1184)('2026-12-01 23:00:40.123+00')).toBe('2026-12-01T23:00:40.123Z');
    expect(sqliteLikeTypes.getTypeParser(3802)('{"a": 1}')).toBe('{"a": 1}');
    expect(sqliteLikeTypes.getTypeParser(23)('7')).toBe(7);
  });

  it('[K-15.6] SQLSTATEs map to the store codes; connect errors are one line naming the cause', () => {
    const at = 'postgres://db/libos?schema=s';
    const err = (code: string, message: string) => Object.assign(new Error(message), { code });
    expect(postgresFault(err('53100', 'could not extend file'), at)).toMatchObject({ code: 'disk_full' });
    expect(postgresFault(err('25006', 'read-only transaction'), at)).toMatchObject({ code: 'store_read_only' });
    expect(postgresFault(err('XX001', 'invalid page'), at)).toMatchObject({ code: 'store_corrupt' });
    expect(postgresFault(err('23505', 'duplicate key'), at)).toBeUndefined();
    expect(connectError(err('28P01', 'password authentication failed for user "app"'), at)).toMatchObject({ code: 'permission_denied' });
    expect(connectError(err('3D000', 'database "libos" does not exist'), at)).toMatchObject({ code: 'store_not_found' });
    const refused = connectError(err('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'), at);
    expect(refused).toMatchObject({ code: 'store_not_found', message: expect.stringMatching(/unreachable/) });
    expect(refused.message).not.toContain('\n');
  });

  it('[K-15.22] a deadlock or a serialization failure is conflict: nothing of the unit was kept, a retry may pass', () => {
    const at = 'postgres://db/libos?schema=s';
    const err = (code: string, message: string) => Object.assign(new Error(message), { code });
    const serial = postgresFault(err('40001', 'could not serialize access due to concurrent update'), at);
    expect(serial).toMatchObject({ code: 'conflict', details: { path: at, sqlstate: '40001' } });
    expect(serial?.message).toMatch(/^store postgres:\/\/db\/libos\?schema=s ended this unit of work: it could not be serialized/);
    expect(postgresFault(err('40P01', 'deadlock detected'), at)?.message).toMatch(/deadlock.*run it again$/);
  });
});
