import { sql, type CreateTableBuilder } from 'kysely';
import type { Migration } from '@libos/sdk';
import { waitColumns } from '../processes/wait-columns.js';
import { migrationStore } from './kernel-scope.js';

/** Version of the kernel's own schema. A store written by another version is refused at open. */
export const KERNEL_SCHEMA_VERSION = 1;

/** The kernel's tables: meta, processes, events, audit. Dialect-neutral (kysely schema builder, JSON as text). */
export const kernelMigrations: readonly Migration[] = [
  {
    name: '0001_kernel_core',
    async up(raw) {
      const db = migrationStore(raw);
      await db.schema
        .createTable('processes')
        .addColumn('pid', 'text', (c) => c.primaryKey())
        .addColumn('parent_pid', 'text')
        .addColumn('image_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('wait_state', 'text')
        .addColumn('outcome', 'text')
        .addColumn('state_generation', 'integer', (c) => c.notNull())
        .addColumn('revision', 'integer', (c) => c.notNull())
        .addColumn('goal', 'text', (c) => c.notNull())
        .addColumn('goal_oid', 'text')
        .addColumn('tool_table', 'text', (c) => c.notNull())
        .addColumn('loaded_skills', 'text', (c) => c.notNull())
        .addColumn('working_directory', 'text', (c) => c.notNull())
        .addColumn('llm_profile_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('processes_parent').on('processes').column('parent_pid').execute();
      await db.schema
        .createTable('events')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('ts', 'text', (c) => c.notNull())
        .addColumn('pid', 'text')
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('audit_records')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('ts', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('decision', 'text')
        .addColumn('call_id', 'text')
        .addColumn('details', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_actor').on('audit_records').column('actor').execute();
    },
  },
  {
    name: '0002_processes_runtime',
    async up(raw) {
      const db = migrationStore(raw);
      // One saved blocked call per process: resumed without a new model call.
      await db.schema
        .createTable('pending_actions')
        .addColumn('pid', 'text', (c) => c.primaryKey())
        .addColumn('resume_token', 'text', (c) => c.notNull().unique())
        .addColumn('call_id', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('args', 'text', (c) => c.notNull())
        .addColumn('wait', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('process_messages')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('recipient_pid', 'text', (c) => c.notNull())
        .addColumn('sender', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('delivery', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('acked_at', 'text')
        .execute();
      await db.schema.createIndex('process_messages_recipient').on('process_messages').columns(['recipient_pid', 'status']).execute();
      await db.schema
        .createTable('human_requests')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('pid', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('prompt', 'text', (c) => c.notNull())
        .addColumn('details', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('response', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('answered_at', 'text')
        .execute();
      await db.schema.createIndex('human_requests_status').on('human_requests').columns(['status', 'pid']).execute();
      await db.schema
        .createTable('llm_calls')
        .addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('pid', 'text', (c) => c.notNull())
        .addColumn('image_id', 'text', (c) => c.notNull())
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('request', 'text', (c) => c.notNull())
        .addColumn('response', 'text')
        .addColumn('prompt_tokens', 'integer')
        .addColumn('completion_tokens', 'integer')
        .addColumn('total_tokens', 'integer')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
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
    async up(raw) {
      // The data labels a message carries (its sender's flow when it was sent): reading it taints the reader.
      await migrationStore(raw).schema.alterTable('process_messages').addColumn('labels', 'text').execute();
    },
  },
  {
    name: '0005_process_runners',
    async up(raw) {
      // Host-managed runners (ObjectTasks): a runner carries one saved call, never asks a model, and tells the
      // service named `observer` how that call went.
      await migrationStore(raw)
        .schema.createTable('process_runners')
        .addColumn('pid', 'text', (c) => c.primaryKey())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('observer', 'text', (c) => c.notNull())
        .addColumn('tool', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  {
    name: '0006_scaling_indexes',
    async up(raw) {
      // Cost per quantum independent of history (issue 9): every hot query reads live rows through an index.
      const db = migrationStore(raw);
      // A wait's kind and deadline as columns (written by `transition`, the one write boundary of wait_state), so
      // due timers and task deadlines are found by deadline instead of by parsing every waiting row.
      await db.schema.alterTable('processes').addColumn('wait_kind', 'text').execute();
      await db.schema.alterTable('processes').addColumn('wait_deadline', 'text').execute();
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
    async up(raw) {
      // Every unit of work appends to `events` and `audit_records` (issue 9): each index and counter they carry is a
      // page more in every commit's WAL. `seq` stays the row id, in commit order, never reused (rows are never
      // deleted); AUTOINCREMENT only added a `sqlite_sequence` write per commit. Ids are never looked up (readers go
      // by seq, pid or actor) and are unique by construction (`newId`: a run's random prefix and a counter), so their
      // unique indexes go too. The tables are rebuilt in place (SQLite cannot drop either from a live table).
      const db = migrationStore(raw);
      await rebuildAppendTable(
        db,
        'events',
        ['id', 'ts', 'pid', 'type', 'data'],
        (t) =>
          t
            .addColumn('pid', 'text')
            .addColumn('type', 'text', (c) => c.notNull())
            .addColumn('data', 'text', (c) => c.notNull()),
        (next) => db.schema.createIndex('events_by_pid').on(next).columns(['pid', 'seq']).execute(),
      );
      const auditColumns = ['id', 'ts', 'actor', 'action', 'target', 'decision', 'call_id', 'details'];
      await rebuildAppendTable(
        db,
        'audit_records',
        auditColumns,
        (t) =>
          t
            .addColumn('actor', 'text', (c) => c.notNull())
            .addColumn('action', 'text', (c) => c.notNull())
            .addColumn('target', 'text')
            .addColumn('decision', 'text')
            .addColumn('call_id', 'text')
            .addColumn('details', 'text', (c) => c.notNull()),
        (next) => db.schema.createIndex('audit_by_actor').on(next).column('actor').execute(),
      );
    },
  },
];

/**
 * Rebuilds an append-only table as `seq integer primary key, id, ts, <rest>`, rows and `seq` values kept. The old
 * table's indexes go with it; `indexes` creates the new table's, under new names, before the old table is dropped, so
 * running this again on a rebuilt store fails (`already exists`) as every applied migration does (K-8.7).
 */
async function rebuildAppendTable(
  db: ReturnType<typeof migrationStore>,
  table: 'events' | 'audit_records',
  columns: readonly string[],
  rest: (t: CreateTableBuilder<string, 'seq' | 'id' | 'ts'>) => CreateTableBuilder<string, string>,
  indexes: (next: string) => Promise<void>,
): Promise<void> {
  const next = `${table}_next`;
  await rest(
    db.schema
      .createTable(next)
      .addColumn('seq', 'integer', (c) => c.primaryKey())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('ts', 'text', (c) => c.notNull()),
  ).execute();
  await indexes(next);
  const list = sql.join(['seq', ...columns].map((c) => sql.ref(c)));
  await sql`insert into ${sql.table(next)} (${list}) select ${list} from ${sql.table(table)} order by seq`.execute(db);
  await db.schema.dropTable(table).execute();
  await db.schema.alterTable(next).renameTo(table).execute();
}
