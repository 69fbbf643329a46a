import { LibosError, type Migration, type MigrationKit } from '@libos/sdk';
import type { Db } from './internal/store.js';

/**
 * Schema of the tables this package owns (Kysely schema builder; JSON, instant and flag columns typed by the kit).
 * Names are stable: a runner keyed by name applies each once.
 */
export const CAPABILITY_MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    name: 'capabilities_0001_grants',
    async up(raw: unknown, kit: MigrationKit) {
      const db = raw as Db;
      const t = kit.types;
      await db.schema
        .createTable('cap_grants')
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('rights', t.json, (c) => c.notNull())
        .addColumn('effect', 'text', (c) => c.notNull())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('issuer_cap_id', t.id)
        .addColumn('parent_cap_id', t.id)
        .addColumn('depth', 'integer', (c) => c.notNull())
        .addColumn('max_depth', 'integer')
        .addColumn('issued_at', t.timestamp, (c) => c.notNull())
        .addColumn('expires_at', t.timestamp)
        .addColumn('uses_remaining', 'integer')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('revoke_cause', 'text')
        .addColumn('delegable', t.flag, (c) => c.notNull())
        .addColumn('revocable', t.flag, (c) => c.notNull())
        .addColumn('constraints', t.json, (c) => c.notNull())
        .addColumn('metadata', t.json, (c) => c.notNull())
        .addColumn('revoked_at', t.timestamp)
        .execute();
      await db.schema.createIndex('cap_grants_subject_kind').on('cap_grants').columns(['subject', 'kind', 'status']).execute();
      await db.schema.createIndex('cap_grants_parent').on('cap_grants').column('parent_cap_id').execute();
      await db.schema
        .createTable('cap_reservations')
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('cap_id', t.id, (c) => c.notNull())
        .addColumn('pid', t.id, (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('settled_at', t.timestamp)
        .execute();
      await db.schema.createIndex('cap_reservations_cap').on('cap_reservations').columns(['cap_id', 'status']).execute();
    },
  },
  {
    name: 'capabilities_0002_budgets',
    async up(raw: unknown, kit: MigrationKit) {
      const db = raw as Db;
      const t = kit.types;
      await db.schema
        .createTable('cap_budget_accounts')
        .addColumn('pid', t.id, (c) => c.primaryKey())
        .addColumn('parent_pid', t.id)
        .addColumn('ancestors', t.json, (c) => c.notNull())
        .addColumn('limits', t.json, (c) => c.notNull())
        .addColumn('usage', t.json, (c) => c.notNull())
        .addColumn('reserved', t.json, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('opened_at', t.timestamp, (c) => c.notNull())
        .addColumn('closed_at', t.timestamp)
        .execute();
      await db.schema.createIndex('cap_budget_accounts_parent').on('cap_budget_accounts').columns(['parent_pid', 'status']).execute();
      await db.schema
        .createTable('cap_budget_reservations')
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('pid', t.id, (c) => c.notNull())
        .addColumn('max', t.json, (c) => c.notNull())
        .addColumn('actual', t.json)
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('settled_at', t.timestamp)
        .execute();
      await db.schema.createIndex('cap_budget_reservations_pid').on('cap_budget_reservations').columns(['pid', 'status']).execute();
    },
  },
  {
    name: 'capabilities_0003_labels',
    async up(raw: unknown, kit: MigrationKit) {
      const db = raw as Db;
      const t = kit.types;
      await db.schema
        .createTable('cap_process_labels')
        .addColumn('pid', t.id, (c) => c.primaryKey())
        .addColumn('labels', t.json, (c) => c.notNull())
        .addColumn('sources', t.json, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('cap_sink_rules')
        .addColumn('pattern', 'text', (c) => c.primaryKey())
        .addColumn('rule', t.json, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('cap_meta')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  {
    name: 'capabilities_0004_manifests',
    async up(raw: unknown, kit: MigrationKit) {
      const db = raw as Db;
      const t = kit.types;
      await db.schema
        .createTable('cap_manifests')
        .addColumn('pid', t.id, (c) => c.primaryKey())
        .addColumn('manifest_id', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('manifest', t.json, (c) => c.notNull())
        .addColumn('bound_at', t.timestamp, (c) => c.notNull())
        .execute();
    },
  },
  {
    name: 'capabilities_0005_permission_requests',
    async up(raw: unknown, kit: MigrationKit) {
      const db = raw as Db;
      const t = kit.types;
      await db.schema
        .createTable('cap_permission_requests')
        .addColumn('request_id', t.id, (c) => c.primaryKey())
        .addColumn('pid', t.id, (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('rights', t.json, (c) => c.notNull())
        .addColumn('human', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('cap_permission_requests_pid').on('cap_permission_requests').columns(['pid', 'created_at']).execute();
    },
  },
  {
    // A check probes (subject, resource) once per pattern that can cover the resource, instead of reading every
    // grant of the subject's kind: its cost stays flat however many grants the subject holds.
    name: 'capabilities_0006_grants_by_resource',
    async up(raw: unknown) {
      const db = raw as Db;
      await db.schema.createIndex('cap_grants_subject_resource').on('cap_grants').columns(['subject', 'resource', 'status']).execute();
    },
  },
  {
    // A process's observed sources, one row each: reading a new Object adds a row instead of rewriting the whole list
    // (a JSON column that grew with every distinct Object read, so the Nth read wrote N ids). Existing lists move over.
    name: 'capabilities_0007_process_sources',
    async up(raw: unknown, kit: MigrationKit) {
      const db = raw as Db;
      const t = kit.types;
      await db.schema
        .createTable('cap_process_sources')
        .addColumn('pid', t.id, (c) => c.notNull())
        .addColumn('oid', t.id, (c) => c.notNull())
        .addPrimaryKeyConstraint('cap_process_sources_pk', ['pid', 'oid'])
        .execute();
      const rows = (await db.selectFrom('cap_process_labels').select(['pid', 'sources']).execute()) as { pid: string; sources: unknown }[];
      for (const row of rows) {
        const oids = [...new Set(sourcesOf(row.pid, row.sources))];
        for (let i = 0; i < oids.length; i += 400) {
          const values = oids.slice(i, i + 400).map((oid) => ({ pid: row.pid, oid }));
          await db.insertInto('cap_process_sources').values(values).execute();
        }
      }
      await db.schema.alterTable('cap_process_labels').dropColumn('sources').execute();
    },
  },
]);

/** The source list of a `cap_process_labels` row before 0007 (JSON text; a driver may hand `jsonb` parsed). */
function sourcesOf(pid: string, value: unknown): string[] {
  const list = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(list) || list.some((o) => typeof o !== 'string')) {
    throw new LibosError('internal_error', `capabilities: cap_process_labels.sources of ${pid} is not a list of ids`);
  }
  return list as string[];
}
