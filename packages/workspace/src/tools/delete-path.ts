import { rmdirSync, rmSync, unlinkSync } from 'node:fs';
import { defineTool, z, type ToolContext } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { fsError, refuse } from '../internal/errors.js';
import { fileDigest } from '../internal/file-io.js';
import { fsResource, requireFs } from '../internal/fs-access.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';
import { isInside } from '../internal/resolve-path.js';
import { walk } from '../internal/walk.js';
import { workingDirectoryOf } from '../internal/working-directory.js';

/** Entries a recursive delete looks at (and checks) at most; a larger tree is refused whole. */
export const MAX_DELETE_ENTRIES = 10_000;

/** Every entry under `root` must be deletable by the caller (a deny inside an allowed tree stops the whole delete). */
async function checkTree(ctx: ToolContext, root: string): Promise<number> {
  let count = 0;
  let denied: string | null = null;
  const report = await walk(
    ctx,
    root,
    { recursive: true, includeHidden: true, maxDepth: 64, maxScanned: MAX_DELETE_ENTRIES },
    async (e) => {
      count++;
      if (!(await ctx.authority.check(fsResource(e.abs), 'delete')).allowed) {
        denied = e.abs;
        return false;
      }
      return true;
    },
  );
  if (denied !== null || report.deniedDirectories.length > 0) {
    const which = denied ?? report.deniedDirectories[0]!;
    throw refuse('permission_denied', 'capability_denied', `path: ${ctx.pid} may not delete ${which} inside ${root}; nothing was deleted`, {
      field: 'path',
      path: which,
    });
  }
  if (report.scanLimitReached) {
    throw refuse(
      'invalid_arguments',
      'directory_not_empty',
      `path: ${root} holds more than ${MAX_DELETE_ENTRIES} entries; nothing was deleted`,
      { field: 'path', path: root },
    );
  }
  if (report.nonUtf8Count > 0) {
    throw refuse(
      'invalid_arguments',
      'not_utf8',
      `path: ${root} holds ${report.nonUtf8Count} names that are not UTF-8, which cannot be checked; nothing was deleted`,
      { field: 'path', path: root },
    );
  }
  return count;
}

/**
 * `delete_path`: deletes a file, a symbolic link (never its target) or a directory (an empty one, or with its
 * contents when `recursive`). Needs `delete` on `fs:<real path>` (and on every entry of a recursive delete). The
 * working directory and its ancestors are refused. Audited with the path and, for a file, its bytes and sha256.
 */
export const deletePath = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'delete_path',
    description:
      'Delete a file, a symlink (not its target) or a directory (empty, or with contents when recursive is true). Refuses your ' +
      'working directory and its parents. Needs delete on fs:<absolute path>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS),
      recursive: z.boolean().default(false).describe('delete a directory with everything in it'),
    }),
    policy: { sideEffects: true },
    async run(args, ctx) {
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['delete'], {
        field: 'path',
        followFinal: false,
        refuseGitMetadata: true,
      });
      const d = { field: 'path', path: p.real };
      if (p.kind === null) throw refuse('not_found', 'not_found', `path: ${p.real} does not exist`, d);
      const cwd = await workingDirectoryOf(ctx, cfg.baseDirectory);
      if (isInside(p.real, cwd)) {
        throw refuse(
          'invalid_arguments',
          'holds_working_directory',
          `path: ${p.real} holds your working directory ${cwd}; set_working_directory elsewhere first`,
          d,
        );
      }
      const before = p.kind === 'file' ? fileDigest(p.real, 'path') : null;
      let entries = 0;
      try {
        if (p.kind === 'directory') {
          if (args.recursive) {
            entries = await checkTree(ctx, p.real);
            rmSync(p.real, { recursive: true });
          } else rmdirSync(p.real);
        } else unlinkSync(p.real);
      } catch (err) {
        throw fsError(err, p.real, 'path');
      }
      await ctx.audit.record({
        action: 'workspace.path.delete',
        target: fsResource(p.real),
        decision: 'ok',
        details: {
          path: p.real,
          requested: p.requested,
          type: p.kind,
          bytes_before: before?.bytes ?? null,
          sha256_before: before?.sha256 ?? null,
          entries,
        },
      });
      return { path: p.real, type: p.kind, deleted: true, entries };
    },
  });
