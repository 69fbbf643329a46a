import { canonicalJson, LibosError, sha256Hex, type StatePart } from '@libos/sdk';
import type { CheckpointLimits } from '../bounds.js';
import type { CheckpointsDb } from './store.js';

/** One captured value, encoded: its canonical JSON, size and digest. */
export interface EncodedBlob {
  readonly partKey: string;
  readonly ref: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly content: string;
}

/**
 * Encodes every blob of a capture and enforces the bounds before anything is written: a value over
 * `maxCaptureBytes`, or the one that takes the sum over `maxCheckpointBytes`, is `checkpoint_too_large` naming it.
 */
export function encodeBlobs(parts: Readonly<Record<string, StatePart>>, limits: CheckpointLimits): { blobs: EncodedBlob[]; total: number } {
  const blobs: EncodedBlob[] = [];
  let total = 0;
  for (const [partKey, part] of Object.entries(parts)) {
    for (const b of part.blobs ?? []) {
      const content = canonicalJson(b.value);
      const bytes = Buffer.byteLength(content, 'utf8');
      if (bytes > limits.maxCaptureBytes) {
        throw new LibosError(
          'checkpoint_too_large',
          `${b.ref}: its payload is ${bytes} bytes, more than the ${limits.maxCaptureBytes} one checkpoint may capture of one value; ` +
            'nothing was captured',
          {
            details: { ref: b.ref, bytes, maximum: limits.maxCaptureBytes },
          },
        );
      }
      total += bytes;
      if (total > limits.maxCheckpointBytes) {
        throw new LibosError(
          'checkpoint_too_large',
          `${b.ref}: with it the checkpoint holds ${total} bytes of payloads, more than the ${limits.maxCheckpointBytes} one checkpoint ` +
            'may hold; nothing was captured',
          {
            details: { ref: b.ref, bytes: total, maximum: limits.maxCheckpointBytes },
          },
        );
      }
      blobs.push({ partKey, ref: b.ref, sha256: sha256Hex(content), bytes, content });
    }
  }
  return { blobs, total };
}

/** Stores the blobs of one checkpoint: content once per digest (shared across checkpoints), a reference per blob. */
export async function storeBlobs(db: CheckpointsDb, checkpointId: string, blobs: readonly EncodedBlob[], at: string): Promise<void> {
  for (const b of blobs) {
    await db
      .insertInto('checkpoint_blobs')
      .values({ sha256: b.sha256, bytes: b.bytes, content: b.content, created_at: at })
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
    await db
      .insertInto('checkpoint_blob_refs')
      .values({ checkpoint_id: checkpointId, part_key: b.partKey, ref: b.ref, sha256: b.sha256, bytes: b.bytes })
      .execute();
  }
}

/**
 * The blobs of a checkpoint by part, then ref, each checked against its digest: content that does not hash to its
 * sha256 is `checkpoint_corrupt` naming it, and nothing is restored from it.
 */
export async function loadBlobs(db: CheckpointsDb, checkpointId: string): Promise<Record<string, Map<string, unknown>>> {
  const rows = await db
    .selectFrom('checkpoint_blob_refs as r')
    .innerJoin('checkpoint_blobs as b', 'b.sha256', 'r.sha256')
    .select(['r.part_key', 'r.ref', 'r.sha256', 'b.content'])
    .where('r.checkpoint_id', '=', checkpointId)
    .execute();
  const out: Record<string, Map<string, unknown>> = {};
  for (const r of rows) {
    if (sha256Hex(r.content) !== r.sha256) {
      throw new LibosError(
        'checkpoint_corrupt',
        `${r.ref}: the captured payload of checkpoint ${checkpointId} no longer matches its sha256 ${r.sha256}; nothing was restored`,
        {
          details: { checkpoint_id: checkpointId, ref: r.ref, sha256: r.sha256 },
        },
      );
    }
    (out[r.part_key] ??= new Map()).set(r.ref, JSON.parse(r.content) as unknown);
  }
  const missing = await db.selectFrom('checkpoint_blob_refs').select(['ref']).where('checkpoint_id', '=', checkpointId).execute();
  if (missing.length !== rows.length) {
    throw new LibosError(
      'checkpoint_corrupt',
      `checkpoint ${checkpointId} references ${missing.length - rows.length} payloads its store no longer holds; nothing was restored`,
      { details: { checkpoint_id: checkpointId } },
    );
  }
  return out;
}

/** Digest and size of each blob of a checkpoint, by `part_key` then ref (for inspect). */
export async function blobDigests(db: CheckpointsDb, checkpointId: string): Promise<Map<string, { sha256: string; bytes: number }>> {
  const rows = await db
    .selectFrom('checkpoint_blob_refs')
    .select(['ref', 'sha256', 'bytes'])
    .where('checkpoint_id', '=', checkpointId)
    .execute();
  return new Map(rows.map((r) => [r.ref, { sha256: r.sha256, bytes: Number(r.bytes) }]));
}
