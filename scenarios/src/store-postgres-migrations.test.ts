// Every migration a runtime runs, on a real PostgreSQL server (issue 15): the sets of `openRuntime` with every standard
// plugin, in its order, through the PostgreSQL kit, in a fresh schema dropped after. LIBOS_TEST_PG_URL names the
// server (default: the local one CI starts, trust auth); with none answering the suite is skipped, saying why.
import { capabilities } from '@libos/capabilities';
import { checkpoints } from '@libos/checkpoints';
import { migrate, migrationKit, migrationSetsFor, type KernelStore } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { workspace } from '@libos/workspace';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { dropSchema, freshSchema, PG_URL, probePostgres } from './support/postgres.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const URL_ = PG_URL;
const SCHEMA = freshSchema('t_migrations').schema;

const unavailable = await probePostgres(URL_);
if (unavailable) console.log(`postgres migrations: skipped (no server at ${URL_}: ${unavailable})`);

describe.skipIf(unavailable !== null)('migrations on PostgreSQL', () => {
  let db: KernelStore;
  const sets = migrationSetsFor([capabilities(), objectMemory(), tasks(), session(), workspace(), checkpoints()]);
  const now = () => new Date().toISOString();

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: URL_ });
    await admin.connect();
    await admin.query(`create schema ${SCHEMA}`);
    await admin.end();
    // One connection, its search_path the fresh schema: every unqualified name the migrations use lands there.
    const pool = new pg.Pool({ connectionString: URL_, max: 1, options: `-c search_path=${SCHEMA}` });
    db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  });

  afterAll(async () => {
    await db?.destroy();
    await dropSchema(SCHEMA);
  });

  const columnType = async (table: string, column: string) => {
    const { rows } = await sql<{ data_type: string; is_identity: string; identity_generation: string | null }>`
      select data_type, is_identity, identity_generation from information_schema.columns
      where table_schema = ${SCHEMA} and table_name = ${table} and column_name = ${column}`.execute(db);
    return rows[0];
  };

  it('[K-15.3] every set openRuntime runs applies in order, and a second run is a no-op', async () => {
    expect(sets.map((s) => s.owner)).toEqual([
      '@libos/kernel',
      '@libos/kernel:llm-context',
      '@libos/kernel:plugins',
      '@libos/capabilities',
      '@libos/object-memory',
      '@libos/tasks',
      '@libos/checkpoints',
    ]);
    await migrate(db, sets, now, SCHEMA, migrationKit('postgres'));
    const applied = await db.selectFrom('libos_migrations').select(['owner', 'name']).orderBy('owner').orderBy('name').execute();
    expect(applied.length).toBe(sets.reduce((n, s) => n + s.migrations.length, 0));
    const meta = await db.selectFrom('libos_meta').selectAll().execute();
    await migrate(db, sets, now, SCHEMA, migrationKit('postgres'));
    expect(await db.selectFrom('libos_migrations').select(['owner', 'name']).orderBy('owner').orderBy('name').execute()).toEqual(applied);
    expect(await db.selectFrom('libos_meta').selectAll().execute()).toEqual(meta);
  });

  it('[K-15.3] JSON columns are jsonb, instants timestamptz, seq a bigint identity; 0009 left ids without a constraint', async () => {
    expect(await columnType('events', 'seq')).toEqual({ data_type: 'bigint', is_identity: 'YES', identity_generation: 'BY DEFAULT' });
    expect(await columnType('audit_records', 'seq')).toMatchObject({ data_type: 'bigint', is_identity: 'YES' });
    expect(await columnType('object_tasks', 'seq')).toMatchObject({ data_type: 'bigint', is_identity: 'YES' });
    expect(await columnType('events', 'data')).toMatchObject({ data_type: 'jsonb' });
    expect(await columnType('cap_grants', 'constraints')).toMatchObject({ data_type: 'jsonb' });
    expect(await columnType('processes', 'created_at')).toMatchObject({ data_type: 'timestamp with time zone' });
    expect(await columnType('processes', 'wait_deadline')).toMatchObject({ data_type: 'timestamp with time zone' });
    expect(await columnType('cap_grants', 'delegable')).toMatchObject({ data_type: 'integer' });
    expect(await columnType('checkpoint_blobs', 'content')).toMatchObject({ data_type: 'text' });
    const { rows: indexes } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where schemaname = ${SCHEMA} and tablename in ('events', 'audit_records')
      order by indexname`.execute(db);
    expect(indexes.map((r) => r.indexname)).toEqual(['audit_by_actor', 'audit_records_pkey', 'events_by_pid', 'events_pkey']);
    // An append without seq is numbered by the identity (0009 kept it), and ids may repeat, as on SQLite.
    const row = { id: 'evt_1', ts: now(), pid: null, type: 'host', data: '{"a":1}' };
    const first = await db.insertInto('events').values(row).returning('seq').executeTakeFirstOrThrow();
    const second = await db.insertInto('events').values(row).returning('seq').executeTakeFirstOrThrow();
    expect(Number(second.seq)).toBe(Number(first.seq) + 1);
  });
});
