import type { Right, ToolContext } from '@libos/sdk';
import { refuse } from './errors.js';
import { isGitMetadata, resolvePath, type ResolvedPath } from './resolve-path.js';
import { workingDirectoryOf } from './working-directory.js';
import { resources } from '@libos/sdk';

/** The `fs:` resource of an absolute path. */
export const fsResource = (absolutePath: string) => resources.fs(absolutePath);

export interface AccessOptions {
  readonly field: string;
  /** Follow a symbolic link in the last component (false for delete and listing the link itself). */
  readonly followFinal?: boolean;
  /** Refuse paths inside a `.git` directory (writes: the repository's own files belong to the git tools). */
  readonly refuseGitMetadata?: boolean;
}

/**
 * Resolves `input` against the caller's working directory (symlinks included), then requires `right` on the
 * `fs:` resource of the real path, for each right given, before anything is read or written. Refusals name the path.
 *
 * @example
 * import { readFileSync } from 'node:fs';
 * const base = '/srv/app';
 * const p = await requireFs(ctx, base, 'src/a.ts', ['read'], { field: 'path' });
 * readFileSync(p.real);
 */
export async function requireFs(
  ctx: ToolContext,
  baseDirectory: string,
  input: string,
  rights: readonly Right[],
  opts: AccessOptions,
): Promise<ResolvedPath> {
  const cwd = await workingDirectoryOf(ctx, baseDirectory);
  const p = resolvePath(cwd, input, { followFinal: opts.followFinal ?? true, field: opts.field });
  if (opts.refuseGitMetadata && isGitMetadata(p.real)) {
    throw refuse(
      'permission_denied',
      'git_metadata',
      `${opts.field}: ${p.real} is inside a .git directory; change a repository only through the git tools`,
      {
        field: opts.field,
        path: p.real,
      },
    );
  }
  for (const right of rights) await ctx.authority.require(fsResource(p.real), right);
  return p;
}
