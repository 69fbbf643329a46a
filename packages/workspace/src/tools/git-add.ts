import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { pathspecs, requireRepo, runGit } from '../internal/git.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';

/** `git_add`: stages paths (or every change with `all`). Needs `git:<repo>` write. */
export const gitAdd = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_add',
    description:
      'Stage paths for the next commit (git add), or every change including deletions with all=true. Needs write on git:<repository root>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      paths: z
        .array(z.string().min(1).max(MAX_PATH_CHARS))
        .max(1_000)
        .optional()
        .describe('paths to stage, relative to your working directory'),
      all: z.boolean().default(false).describe('stage every change in the repository (git add -A)'),
    }),
    policy: { sideEffects: true },
    async run(args, ctx) {
      if (args.all === (args.paths !== undefined && args.paths.length > 0)) {
        throw refuse('invalid_arguments', 'conflicting_arguments', 'paths, all: give a non-empty paths list or all: true (one of them)', {
          field: 'paths',
        });
      }
      const repo = await requireRepo(ctx, cfg, args.path, 'write');
      const specs = args.all ? [] : pathspecs(repo, args.paths!);
      await runGit(ctx, cfg, repo, args.all ? ['add', '-A'] : ['add', '--', ...specs]);
      await ctx.audit.record({
        action: 'workspace.git.add',
        target: repo.resource,
        decision: 'ok',
        details: { repo: repo.root, paths: specs.length, all: args.all },
      });
      return { repo: repo.root, staged: args.all ? 'all' : specs.map((s) => s.replace(/^:\(literal\)/, '')) };
    },
  });
