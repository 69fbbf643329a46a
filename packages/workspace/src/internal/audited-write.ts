import type { ToolContext } from '@libos/sdk';
import { atomicWrite, fileDigest, sha256Of } from './file-io.js';
import { fsResource } from './fs-access.js';
import type { ResolvedPath } from './resolve-path.js';

/** What a write reports back. */
export interface WriteReceipt {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly created: boolean;
}

/**
 * Writes `data` over the file at `p.real` atomically (keeping an existing file's mode), then records the audit entry
 * (`action`, target `fs:<path>`, path, bytes and sha256 before and after: never the content) and the
 * `workspace_file_written` event, in the call's transaction.
 */
export async function auditedWrite(
  ctx: ToolContext,
  p: ResolvedPath,
  data: Uint8Array,
  action: string,
  extra: Readonly<Record<string, unknown>> = {},
): Promise<WriteReceipt> {
  const before = p.kind === 'file' ? fileDigest(p.real, 'path') : null;
  atomicWrite(p.real, data, p.kind === 'file' && p.stats ? p.stats.mode : null, 'path');
  const sha256 = sha256Of(data);
  const created = before === null;
  await ctx.audit.record({
    action,
    target: fsResource(p.real),
    decision: 'ok',
    details: {
      path: p.real,
      requested: p.requested,
      bytes_before: before?.bytes ?? null,
      sha256_before: before?.sha256 ?? null,
      bytes_after: data.length,
      sha256_after: sha256,
      created,
      ...extra,
    },
  });
  await ctx.events.emit('workspace_file_written', { pid: ctx.pid, path: p.real, bytes: data.length, sha256, created });
  return { path: p.real, bytes: data.length, sha256, created };
}
