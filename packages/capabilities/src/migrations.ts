import type { Migration } from '@libos/sdk';
import type { Db } from './internal/store.js';

/**
 * Schema of the tables this package owns (dialect-neutral Kysely schema builder; JSON stored as text).
 * Names are stable: a runner keyed by name applies each once.
 */
export const CAPABILITY_MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    name: 'capabilities_0001_grants',
    async up(raw: unknown) {
      const db = raw as Db;
      await db.schema
        .createTable('cap_grants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('rights', 'text', (c) => c.notNull())
        .addColumn('effect', 'text', (c) => c.notNull())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('issuer_cap_id', 'text')
        .addColumn('parent_cap_id', 'text')
        .addColumn('depth', 'integer', (c) => c.notNull())
        .addColumn('max_depth', 'integer')
        .addColumn('issued_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('uses_remaining', 'integer')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('revoke_cause', 'text')
        .addColumn('delegable', 'integer', (c) => c.notNull())
        .addColumn('revocable', 'integer', (c) => c.notNull())
        .addColumn('constraints', 'text', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('cap_grants_subject_kind').on('cap_grants').columns(['subject', 'kind', 'status']).execute();
      await db.schema.createIndex('cap_grants_parent').on('cap_grants').column('parent_cap_id').execute();
      await db.schema
        .createTable('cap_reservations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('cap_id', 'text', (c) => c.notNull())
        .addColumn('pid', 'text', (c) => c.notNull())
        .addColumn('n', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('settled_at', 'text')
        .execute();
      await db.schema.createIndex('cap_reservations_cap').on('cap_reservations').columns(['cap_id', 'status']).execute();
    },
  },
  {
    name: 'capabilities_0002_budgets',
    async up(raw: unknown) {
      const db = raw as Db;
      await db.schema
        .createTable('cap_budget_accounts')
        .addColumn('pid', 'text', (c) => c.primaryKey())
        .addColumn('parent_pid', 'text')
        .addColumn('ancestors', 'text', (c) => c.notNull())
        .addColumn('limits', 'text', (c) => c.notNull())
        .addColumn('usage', 'text', (c) => c.notNull())
        .addColumn('reserved', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('opened_at', 'text', (c) => c.notNull())
        .addColumn('closed_at', 'text')
        .execute();
      await db.schema.createIndex('cap_budget_accounts_parent').on('cap_budget_accounts').columns(['parent_pid', 'status']).execute();
      await db.schema
        .createTable('cap_budget_reservations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('pid', 'text', (c) => c.notNull())
        .addColumn('max', 'text', (c) => c.notNull())
        .addColumn('actual', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('settled_at', 'text')
        .execute();
      await db.schema.createIndex('cap_budget_reservations_pid').on('cap_budget_reservations').columns(['pid', 'status']).execute();
    },
  },
  {
    name: 'capabilities_0003_labels',
    async up(raw: unknown) {
      const db = raw as Db;
      await db.schema
        .createTable('cap_process_labels')
        .addColumn('pid', 'text', (c) => c.primaryKey())
        .addColumn('labels', 'text', (c) => c.notNull())
        .addColumn('sources', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('cap_sink_rules')
        .addColumn('pattern', 'text', (c) => c.primaryKey())
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
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
    async up(raw: unknown) {
      const db = raw as Db;
      await db.schema
        .createTable('cap_manifests')
        .addColumn('pid', 'text', (c) => c.primaryKey())
        .addColumn('manifest_id', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('manifest', 'text', (c) => c.notNull())
        .addColumn('bound_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  {
    name: 'capabilities_0005_permission_requests',
    async up(raw: unknown) {
      const db = raw as Db;
      await db.schema
        .createTable('cap_permission_requests')
        .addColumn('request_id', 'text', (c) => c.primaryKey())
        .addColumn('pid', 'text', (c) => c.notNull())
        .addColumn('resource', 'text', (c) => c.notNull())
        .addColumn('rights', 'text', (c) => c.notNull())
        .addColumn('human', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
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
]);
