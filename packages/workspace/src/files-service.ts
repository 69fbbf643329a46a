import { dirname } from 'node:path';
import type { FilesService, FileText, FileWriteReceipt, ServiceScope, ToolContext } from '@libos/sdk';
import type { WorkspaceConfig } from './config.js';
import { auditedWrite } from './internal/audited-write.js';
import { refuse } from './internal/errors.js';
import { readTextFile, sha256Of } from './internal/file-io.js';
import { requireFs } from './internal/fs-access.js';
import { checkText } from './internal/path-text.js';
import { resolvePath } from './internal/resolve-path.js';
import { resources } from '@libos/sdk';

/** Largest file `FilesService.readText` reads by default, in bytes. */
export const FILES_SERVICE_MAX_READ_BYTES = 1_000_000;

/**
 * The `files` service: the workspace's file provider for other plugins (e.g. Object files), with the same rules as its
 * own tools. The path is resolved against `pid`'s working directory, every symbolic link followed, and `read` or
 * `write` on `fs:<real path>` is required of `pid` before anything is read or written; a write is atomic, refuses
 * `.git` contents and a missing parent, and is audited (path, bytes, sha256 before and after; never the content).
 *
 * @example
 * const files = scope.service<FilesService>(SERVICE_NAMES.files);
 * const { content } = await files.readText(pid, 'notes/plan.md');
 */
export function filesService(cfg: WorkspaceConfig, scope: ServiceScope): FilesService {
  // The tools' path checks take a call context: this one acts as `pid`, in the caller's transaction.
  const as = (pid: string) => ({ ...scope, pid, authority: scope.authorityFor(pid) }) as unknown as ToolContext;

  return {
    async readText(pid, path, opts = {}): Promise<FileText> {
      const field = opts.field ?? 'path';
      const max = opts.maxBytes ?? FILES_SERVICE_MAX_READ_BYTES;
      const p = await requireFs(as(pid), cfg.baseDirectory, path, ['read'], { field });
      if (p.kind === null) throw refuse('not_found', 'not_found', `${field}: ${p.real} does not exist`, { field, path: p.real });
      if (p.stats && p.stats.size > max) {
        throw refuse(
          'invalid_arguments',
          'file_too_large',
          `${field}: ${p.real} has ${p.stats.size} bytes, more than the ${max} this reads`,
          { field, path: p.real, bytes: p.stats.size },
        );
      }
      const { text, bytes } = readTextFile(p.real, field);
      await scope.audit.record({
        action: 'workspace.file.read',
        target: resources.fs(p.real),
        decision: 'ok',
        details: { path: p.real, requested: path, bytes: bytes.length, sha256: sha256Of(bytes), pid },
      });
      return { path: p.real, content: text, bytes: bytes.length, sha256: sha256Of(bytes) };
    },

    async writeText(pid, path, content, opts = {}): Promise<FileWriteReceipt> {
      const field = opts.field ?? 'path';
      const mode = opts.mode ?? 'create_or_overwrite';
      checkText('content', content);
      const ctx = as(pid);
      const p = await requireFs(ctx, cfg.baseDirectory, path, ['write'], { field, refuseGitMetadata: true });
      const d = { field, path: p.real };
      if (p.kind === 'directory') throw refuse('invalid_arguments', 'is_directory', `${field}: ${p.real} is a directory, not a file`, d);
      if (p.kind !== null && p.kind !== 'file')
        throw refuse('invalid_arguments', 'not_a_regular_file', `${field}: ${p.real} is not a regular file`, d);
      if (p.kind === 'file' && mode === 'create')
        throw refuse('conflict', 'already_exists', `${field}: ${p.real} already exists (mode create)`, d);
      if (p.kind === null && mode === 'overwrite')
        throw refuse('not_found', 'not_found', `${field}: ${p.real} does not exist (mode overwrite)`, d);
      const parent = resolvePath('/', dirname(p.real), { followFinal: true, field });
      if (parent.kind !== 'directory') {
        const missing = parent.kind === null;
        throw refuse(
          missing ? 'not_found' : 'invalid_arguments',
          missing ? 'not_found' : 'not_a_directory',
          `${field}: the parent ${parent.real} of ${p.real} ${missing ? 'does not exist' : 'is not a directory'}`,
          d,
        );
      }
      return auditedWrite(ctx, p, Buffer.from(content, 'utf8'), 'workspace.file.write');
    },
  };
}
