import { sql } from 'kysely';
import type { Migration } from '@libos/sdk';
import { waitColumns } from '../processes/wait-columns.js';
import { migrationStore } from './kernel-scope.js';

/** Version of the kernel's own schema. A store written by another version is refused at open. */
export const KERNEL_SCHEMA_VERSION = 1;

/** The kernel's tables: processes, events, audit, the mailbox, model calls. Column types and keys come from the kit. */
export const kernelMigrations: readonly Migration[] = [
  {
    name: '0001_kernel_core',
    async up(raw, kit) {
      const db = migrationStore(raw);
      const t = kit.types;
      await db.schema
        .createTable('processes')
        .addColumn('pid', t.id, (c) => c.primaryKey())
        .addColumn('parent_pid', t.id)
        .addColumn('image_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('wait_state', t.json)
        .addColumn('outcome', t.json)
        .addColumn('state_generation', 'integer', (c) => c.notNull())
        .addColumn('revision', 'integer', (c) => c.notNull())
        .addColumn('goal', 'text', (c) => c.notNull())
        .addColumn('goal_oid', t.id)
        .addColumn('tool_table', t.json, (c) => c.notNull())
        .addColumn('loaded_skills', t.json, (c) => c.notNull())
        .addColumn('working_directory', 'text', (c) => c.notNull())
        .addColumn('llm_profile_id', 'text')
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('processes_parent').on('processes').column('parent_pid').execute();
      await db.schema
        .createTable('events')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('id', t.id, (c) => c.notNull().unique())
        .addColumn('ts', t.timestamp, (c) => c.notNull())
        .addColumn('pid', t.id)
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', t.json, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('audit_records')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('id', t.id, (c) => c.notNull().unique())
        .addColumn('ts', t.timestamp, (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('decision', 'text')
        .addColumn('call_id', t.id)
        .addColumn('details', t.json, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_actor').on('audit_records').column('actor').execute();
    },
  },
  {
    name: '0002_processes_runtime',
    async up(raw, kit) {
      const db = migrationStore(raw);
      const t = kit.types;
      // One saved blocked call per process: resumed without a new model call.
      await db.schema
        .createTable('pending_actions')
        .addColumn('pid', t.id, (c) => c.primaryKey())
        .addColumn('resume_token', 'text', (c) => c.notNull().unique())
        .addColumn('call_id', t.id, (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('args', t.json, (c) => c.notNull())
        .addColumn('wait', t.json, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('process_messages')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('id', t.id, (c) => c.notNull().unique())
        .addColumn('recipient_pid', t.id, (c) => c.notNull())
        .addColumn('sender', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('delivery', 'text', (c) => c.notNull())
        .addColumn('payload', t.json, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('acked_at', t.timestamp)
        .execute();
      await db.schema.createIndex('process_messages_recipient').on('process_messages').columns(['recipient_pid', 'status']).execute();
      await db.schema
        .createTable('human_requests')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('id', t.id, (c) => c.notNull().unique())
        .addColumn('pid', t.id, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('details', t.json, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('response', t.json)
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('answered_at', t.timestamp)
        .execute();
      await db.schema.createIndex('human_requests_status').on('human_requests').columns(['status', 'pid']).execute();
      await db.schema
        .createTable('llm_calls')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('id', t.id, (c) => c.notNull().unique())
        .addColumn('pid', t.id, (c) => c.notNull())
        .addColumn('image_id', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('request', t.json, (c) => c.notNull())
        .addColumn('response', t.json)
        .addColumn('prompt_tokens', 'integer')
        .addColumn('completion_tokens', 'integer')
        .addColumn('total_tokens', 'integer')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('llm_calls_pid').on('llm_calls').column('pid').execute();
    },
  },
  {
    name: '0003_message_fields',
    async up(raw) {
      const db = migrationStore(raw);
      // The mailbox's addressing fields: subject and body text, and the correlation and
      // reply-to ids that filters match on (task notifications carry correlation_id = task id).
      await db.schema
        .alterTable('process_messages')
        .addColumn('subject', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema
        .alterTable('process_messages')
        .addColumn('body', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema.alterTable('process_messages').addColumn('correlation_id', 'text').execute();
      await db.schema.alterTable('process_messages').addColumn('reply_to', 'text').execute();
    },
  },
  {
    name: '0004_message_labels',
    async up(raw, kit) {
      // The data labels a message carries (its sender's flow when it was sent): reading it taints the reader.
      await migrationStore(raw).schema.alterTable('process_messages').addColumn('labels', kit.types.json).execute();
    },
  },
  {
    name: '0005_process_runners',
    async up(raw, kit) {
      // Host-managed runners (ObjectTasks): a runner carries one saved call, never asks a model, and tells the
      // service named `observer` how that call went.
      await migrationStore(raw)
        .schema.createTable('process_runners')
        .addColumn('pid', kit.types.id, (c) => c.primaryKey())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('observer', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('created_at', kit.types.timestamp, (c) => c.notNull())
        .execute();
    },
  },
  {
    name: '0006_scaling_indexes',
    async up(raw, kit) {
      // Cost per quantum independent of history (issue 9): every hot query reads live rows through an index.
      const db = migrationStore(raw);
      // A wait's kind and deadline as columns (written by `transition`, the one write boundary of wait_state), so
      // due timers and task deadlines are found by deadline instead of by parsing every waiting row.
      await db.schema.alterTable('processes').addColumn('wait_kind', 'text').execute();
      await db.schema.alterTable('processes').addColumn('wait_deadline', kit.types.timestamp).execute();
      for (const r of await db.selectFrom('processes').select(['pid', 'wait_state']).where('wait_state', 'is not', null).execute()) {
        const w = waitColumns(JSON.parse(r.wait_state!) as Record<string, unknown>);
        await db.updateTable('processes').set(w).where('pid', '=', r.pid).execute();
      }
      // The runnable set in scheduling order and the running rows at reopen: a live status never reads terminal rows.
      await db.schema.createIndex('processes_status').on('processes').columns(['status', 'created_at', 'pid']).execute();
      // Only waiting rows are indexed (a terminal process has no wait).
      await db.schema
        .createIndex('processes_wait')
        .on('processes')
        .columns(['wait_kind', 'wait_deadline'])
        .where(sql.ref('wait_kind'), 'is not', null)
        .execute();
      // Saved calls found `resuming` at reopen (the table holds only calls of live processes; this keeps it a lookup).
      await db.schema.createIndex('pending_actions_status').on('pending_actions').column('status').execute();
      // A process's recent events (its prompt) and `events --pid`.
      await db.schema.createIndex('events_pid').on('events').columns(['pid', 'seq']).execute();
      // A process's latest question (ask_human resuming).
      await db.schema.createIndex('human_requests_pid').on('human_requests').columns(['pid', 'kind', 'seq']).execute();
    },
  },
  {
    name: '0007_llm_texts',
    async up(raw) {
      // Prompts stored by hash (issue 9): each paragraph of a prompt once, however many model calls send it again
      // (the system prompt, the Skill catalog and the loaded Skills' bodies are most of every prompt). `llm_calls`
      // rows written before keep their inline request; `llm-calls.ts` reads both.
      const db = migrationStore(raw);
      await db.schema
        .createTable('llm_texts')
        .addColumn('sha256', 'text', (c) => c.primaryKey())
        .addColumn('text', 'text', (c) => c.notNull())
        .execute();
    },
  },
  {
    name: '0008_llm_call_input_estimate',
    async up(raw) {
      // The input estimate a model call's context maintenance projected against its profile's window (issue 11):
      // null when the run had no profile, and on the row of a corrective retry (whose extra message it never saw).
      await migrationStore(raw).schema.alterTable('llm_calls').addColumn('input_estimate_tokens', 'integer').execute();
    },
  },
  {
    name: '0009_lean_append_tables',
    async up(_raw, kit) {
      // Every unit of work appends to `events` and `audit_records` (issue 9): each index and counter they carry is a
      // page more in every commit's WAL. `seq` stays the row id, in commit order, never reused (rows are never
      // deleted); AUTOINCREMENT only added a `sqlite_sequence` write per commit. Ids are never looked up (readers go
      // by seq, pid or actor) and are unique by construction (`newId`: a run's random prefix and a counter), so their
      // unique indexes go too. The kit writes what differs: SQLite rebuilds each table (it cannot drop either from a live
      // table), PostgreSQL drops the id constraint and the old indexes in place.
      const { id, timestamp, json } = kit.types;
      await kit.leanAppendTable('events', {
        columns: [
          { name: 'id', type: id, notNull: true },
          { name: 'ts', type: timestamp, notNull: true },
          { name: 'pid', type: id },
          { name: 'type', type: 'text', notNull: true },
          { name: 'data', type: json, notNull: true },
        ],
        indexes: [{ name: 'events_by_pid', columns: ['pid', 'seq'] }],
      });
      await kit.leanAppendTable('audit_records', {
        columns: [
          { name: 'id', type: id, notNull: true },
          { name: 'ts', type: timestamp, notNull: true },
          { name: 'actor', type: 'text', notNull: true },
          { name: 'action', type: 'text', notNull: true },
          { name: 'target', type: 'text' },
          { name: 'decision', type: 'text' },
          { name: 'call_id', type: id },
          { name: 'details', type: json, notNull: true },
        ],
        indexes: [{ name: 'audit_by_actor', columns: ['actor'] }],
      });
    },
  },
  {
    name: '0010_process_trees',
    async up(raw, kit) {
      // Many hosts on one store (issue 15): a host runs whole process trees, so every process names its tree's root,
      // and a lease per tree says which host runs it (`hosts/`). One host on SQLite never reads the leases.
      const db = migrationStore(raw);
      const { id, timestamp } = kit.types;
      await db.schema.alterTable('processes').addColumn('root_pid', id).execute();
      await db
        .updateTable('processes')
        .set({ root_pid: sql.ref('pid') })
        .where('parent_pid', 'is', null)
        .execute();
      // Down the tree one generation per statement, then an orphan (its parent row gone) roots its own tree.
      for (;;) {
        const r = await db
          .updateTable('processes')
          .set({ root_pid: sql`(select p.root_pid from processes p where p.pid = processes.parent_pid)` })
          .where('root_pid', 'is', null)
          .where(sql<boolean>`exists (select 1 from processes p where p.pid = processes.parent_pid and p.root_pid is not null)`)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) break;
      }
      await db
        .updateTable('processes')
        .set({ root_pid: sql.ref('pid') })
        .where('root_pid', 'is', null)
        .execute();
      await db.schema.createIndex('processes_tree').on('processes').columns(['root_pid', 'status']).execute();
      await db.schema
        .createTable('libos_hosts')
        .addColumn('host_id', id, (c) => c.primaryKey())
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('os_pid', 'integer', (c) => c.notNull())
        .addColumn('instance_id', 'text', (c) => c.notNull())
        .addColumn('started_at', timestamp, (c) => c.notNull())
        .addColumn('heartbeat_at', timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('libos_tree_leases')
        .addColumn('root_pid', id, (c) => c.primaryKey())
        .addColumn('host_id', id)
        .addColumn('lease_until', timestamp, (c) => c.notNull())
        .addColumn('gen', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tree_leases_host').on('libos_tree_leases').columns(['host_id', 'lease_until']).execute();
      // A process's loaded Skills are an object in activation order (the prompt lists them so). jsonb keeps no key
      // order, so on PostgreSQL the column becomes text as written; SQLite's JSON is text already.
      if (kit.dialect === 'postgres')
        await sql`alter table processes alter column loaded_skills type text using loaded_skills::text`.execute(db);
    },
  },
];
