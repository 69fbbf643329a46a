import type { Migration, MigrationKit } from '@libos/sdk';
import { sql, type Kysely } from 'kysely';
import { creatorGrantsToOwnership } from './creator-grants-migration.js';

/**
 * Schema of the tables Object Memory owns: text and integer columns, with JSON, instant, id and flag types from the kit.
 */
export const migrations: readonly Migration[] = [
  {
    name: 'object-memory/0001_init',
    async up(store: unknown, kit: MigrationKit) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const db = store as Kysely<any>;
      const t = kit.types;
      await db.schema
        .createTable('om_namespaces')
        .addColumn('namespace', t.id, (c) => c.primaryKey())
        .addColumn('parent_namespace', t.id)
        .addColumn('metadata', t.json, (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('om_namespaces_parent').on('om_namespaces').columns(['parent_namespace', 'namespace']).execute();

      await db.schema
        .createTable('om_objects')
        .addColumn('oid', t.id, (c) => c.primaryKey())
        .addColumn('namespace', t.id, (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('schema_version', 'text', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('immutable', t.flag, (c) => c.notNull())
        .addColumn('metadata', t.json, (c) => c.notNull())
        .addColumn('labels', t.json, (c) => c.notNull())
        .addColumn('provenance', t.json, (c) => c.notNull())
        .addColumn('payload', t.json, (c) => c.notNull())
        .addColumn('owner_kind', 'text', (c) => c.notNull())
        .addColumn('owner_id', t.id, (c) => c.notNull())
        .addColumn('lifecycle_state', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_seq', 'integer', (c) => c.notNull())
        .addColumn('deleted_at', t.timestamp)
        .execute();
      // A name is held by live and payload-unavailable rows; superseded/released rows free it.
      await db.schema
        .createIndex('om_objects_live_name')
        .on('om_objects')
        .columns(['namespace', 'name'])
        .unique()
        .where(sql.ref('lifecycle_state'), 'in', ['live', 'payload_unavailable'])
        .execute();
      await db.schema.createIndex('om_objects_listing').on('om_objects').columns(['namespace', 'lifecycle_state', 'updated_at']).execute();
      await db.schema.createIndex('om_objects_seq').on('om_objects').column('updated_seq').execute();

      await db.schema
        .createTable('om_views')
        .addColumn('view_id', t.id, (c) => c.primaryKey())
        .addColumn('owner_pid', t.id, (c) => c.notNull().unique())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('filters', t.json, (c) => c.notNull())
        .addColumn('rights_policy', 'text', (c) => c.notNull())
        .addColumn('created_from', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('om_view_roots')
        .addColumn('view_id', t.id, (c) => c.notNull())
        .addColumn('oid', t.id, (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('capability_id', t.id)
        .addPrimaryKeyConstraint('om_view_roots_pk', ['view_id', 'oid'])
        .execute();
    },
  },
  {
    // An owner's rights derive from `owner_id` (no grant row per Object): listing a process's grants reads its
    // Objects by owner.
    name: 'object-memory/0002_objects_by_owner',
    async up(store: unknown) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const db = store as Kysely<any>;
      await db.schema.createIndex('om_objects_owner').on('om_objects').columns(['owner_id', 'created_at']).execute();
    },
  },
  {
    // A store from before: its stored creator grants become the implicit owner records (same decisions).
    name: 'object-memory/0003_creator_grants_to_ownership',
    async up(store: unknown, kit: MigrationKit | undefined) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      await creatorGrantsToOwnership(store as Kysely<any>, kit?.dialect ?? 'sqlite');
    },
  },
  {
    // Links between Objects (`src -relation-> dst`, e.g. an ObjectTask's owner -produced-> its result): an owner
    // watch's `linked` event, and what a checkpoint keeps with the Objects it captures.
    name: 'object-memory/0004_links',
    async up(store: unknown, kit: MigrationKit) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const db = store as Kysely<any>;
      const t = kit.types;
      await db.schema
        .createTable('om_links')
        .addColumn('link_id', t.id, (c) => c.primaryKey())
        .addColumn('src_oid', t.id, (c) => c.notNull())
        .addColumn('dst_oid', t.id, (c) => c.notNull())
        .addColumn('relation', 'text', (c) => c.notNull())
        .addColumn('metadata', t.json, (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('om_links_src').on('om_links').columns(['src_oid', 'created_at']).execute();
    },
  },
  {
    // Which runtime holds each payload (issue 15): among many hosts on one store, a payload another live host holds
    // is unavailable here but not lost; only a payload whose runtime is gone is marked lost by the lazy sweep.
    name: 'object-memory/0005_payload_instance',
    async up(store: unknown) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      await (store as Kysely<any>).schema.alterTable('om_objects').addColumn('payload_instance', 'text').execute();
    },
  },
];
