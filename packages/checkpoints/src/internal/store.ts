import type { Kysely } from 'kysely';
import type { Migration } from '@libos/sdk';

/**
 * The tables of `@libos/checkpoints`, all append-only history except nothing: a checkpoint, its parts and its blob
 * references are written once; blobs are content-addressed (sha256 of their canonical JSON), shared by every
 * checkpoint that holds the same content; each restore and fork appends one row.
 */
export interface CheckpointTable {
  seq: number;
  checkpoint_id: string;
  /** The subtree's root: the process the checkpoint belongs to. */
  owner_pid: string;
  /** Who made it: a pid, or `host`. */
  created_by: string;
  label: string | null;
  captured_at: string;
  /** JSON array of the pids captured, root first. */
  pids: string;
  /** JSON object of counts (processes, objects, grants, tasks, messages, payloads). */
  summary: string;
  payload_bytes: number;
}

export interface PartTable {
  checkpoint_id: string;
  part_key: string;
  data: string;
}

export interface BlobTable {
  sha256: string;
  bytes: number;
  /** Canonical JSON text of the value. */
  content: string;
  created_at: string;
}

export interface BlobRefTable {
  checkpoint_id: string;
  part_key: string;
  ref: string;
  sha256: string;
  bytes: number;
}

export interface EventTable {
  seq: number;
  event_id: string;
  checkpoint_id: string;
  kind: string;
  actor: string;
  at: string;
  report: string;
}

export interface FileLabelTable {
  path: string;
  labels: string;
  sha256: string;
  oid: string;
  pid: string;
  updated_at: string;
}

interface CheckpointsDatabase {
  file_label_bindings: FileLabelTable;
  checkpoints: CheckpointTable;
  checkpoint_parts: PartTable;
  checkpoint_blobs: BlobTable;
  checkpoint_blob_refs: BlobRefTable;
  checkpoint_events: EventTable;
}

export type CheckpointsDb = Kysely<CheckpointsDatabase>;
export const checkpointsDb = (store: unknown) => store as CheckpointsDb;

export const migrations: readonly Migration[] = [
  {
    name: 'checkpoints/0001_init',
    async up(raw, kit) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const db = raw as Kysely<any>;
      const t = kit.types;
      await db.schema
        .createTable('checkpoints')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('checkpoint_id', t.id, (c) => c.notNull().unique())
        .addColumn('owner_pid', t.id, (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('label', 'text')
        .addColumn('captured_at', t.timestamp, (c) => c.notNull())
        .addColumn('pids', t.json, (c) => c.notNull())
        .addColumn('summary', t.json, (c) => c.notNull())
        .addColumn('payload_bytes', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('checkpoints_owner').on('checkpoints').columns(['owner_pid', 'seq']).execute();
      await db.schema
        .createTable('checkpoint_parts')
        .addColumn('checkpoint_id', t.id, (c) => c.notNull())
        .addColumn('part_key', 'text', (c) => c.notNull())
        .addColumn('data', t.json, (c) => c.notNull())
        .addPrimaryKeyConstraint('checkpoint_parts_pk', ['checkpoint_id', 'part_key'])
        .execute();
      await db.schema
        .createTable('checkpoint_blobs')
        .addColumn('sha256', 'text', (c) => c.primaryKey())
        .addColumn('bytes', 'integer', (c) => c.notNull())
        // Text on every dialect: the canonical JSON whose sha256 names the blob, byte for byte (jsonb would reformat it).
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('checkpoint_blob_refs')
        .addColumn('checkpoint_id', t.id, (c) => c.notNull())
        .addColumn('part_key', 'text', (c) => c.notNull())
        .addColumn('ref', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('bytes', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('checkpoint_blob_refs_pk', ['checkpoint_id', 'part_key', 'ref'])
        .execute();
      await db.schema
        .createTable('checkpoint_events')
        .addColumn('seq', 'integer', kit.seq)
        .addColumn('event_id', t.id, (c) => c.notNull().unique())
        .addColumn('checkpoint_id', t.id, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('at', t.timestamp, (c) => c.notNull())
        .addColumn('report', t.json, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('checkpoint_events_checkpoint').on('checkpoint_events').columns(['checkpoint_id', 'seq']).execute();
      // Labels a file written from an Object carries (its binding): reading the file into an Object gives them back.
      await db.schema
        .createTable('file_label_bindings')
        .addColumn('path', 'text', (c) => c.primaryKey())
        .addColumn('labels', t.json, (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('oid', t.id, (c) => c.notNull())
        .addColumn('pid', t.id, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
    },
  },
];
