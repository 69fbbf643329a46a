import { defineTool, WORKING_DIRECTORY_SERVICE, z, type WorkingDirectoryService } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { fsResource, requireFs } from '../internal/fs-access.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';
import { workingDirectoryOf } from '../internal/working-directory.js';

/** `get_working_directory`: the caller's working directory, absolute (children start with their parent's). */
export const getWorkingDirectory = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'get_working_directory',
    description:
      'Your working directory (absolute): relative paths of the file, shell and git tools start there. Children start with yours.',
    input: z.object({}),
    output: z.object({ path: z.string() }),
    async run(_args, ctx) {
      return { path: await workingDirectoryOf(ctx, cfg.baseDirectory) };
    },
  });

/**
 * `set_working_directory`: moves the caller's working directory to an existing directory (relative paths start from
 * the current one; symbolic links are resolved). Needs `read` on `fs:<real directory>`. Children spawned later
 * start there; running children keep theirs.
 */
export const setWorkingDirectory = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'set_working_directory',
    description:
      'Change your working directory to an existing directory (resolved, symlinks included). Children spawned afterwards start ' +
      'there. Needs read on fs:<absolute directory>.',
    input: z.object({ path: z.string().min(1).max(MAX_PATH_CHARS) }),
    output: z.object({ path: z.string(), previous: z.string() }),
    async run(args, ctx) {
      const previous = await workingDirectoryOf(ctx, cfg.baseDirectory);
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['read'], { field: 'path' });
      if (p.kind === null) throw refuse('not_found', 'not_found', `path: ${p.real} does not exist`, { field: 'path', path: p.real });
      if (p.kind !== 'directory')
        throw refuse('invalid_arguments', 'not_a_directory', `path: ${p.real} is not a directory`, { field: 'path', path: p.real });
      await ctx.service<WorkingDirectoryService>(WORKING_DIRECTORY_SERVICE).set(ctx.pid, p.real);
      await ctx.audit.record({
        action: 'workspace.cwd.set',
        target: fsResource(p.real),
        decision: 'ok',
        details: { path: p.real, previous },
      });
      return { path: p.real, previous };
    },
  });
