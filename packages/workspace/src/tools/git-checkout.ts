import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { checkRef, pathspecs, requireRepo, runGit } from '../internal/git.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';

/**
 * `git_checkout`: switches to a branch or commit (optionally creating the branch), or restores paths from a ref. The
 * worktree changes under the `git:<repo>` write grant. Git refuses to overwrite uncommitted changes (a `conflict`).
 */
export const gitCheckout = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_checkout',
    description:
      'Switch the repository holding path to ref (a branch or commit); create_branch makes ref a new branch at HEAD first. With ' +
      'paths, restore those files from ref instead (discarding their changes). Needs write on git:<repository root>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      ref: z.string().min(1).max(256),
      create_branch: z.boolean().default(false),
      paths: z.array(z.string().min(1).max(MAX_PATH_CHARS)).max(1_000).optional(),
    }),
    policy: { sideEffects: true },
    async run(args, ctx) {
      if (args.create_branch && args.paths !== undefined)
        throw refuse('invalid_arguments', 'conflicting_arguments', 'create_branch, paths: restoring paths cannot create a branch', {
          field: 'paths',
        });
      const repo = await requireRepo(ctx, cfg, args.path, 'write');
      const ref = checkRef('ref', args.ref);
      const gitArgs = args.paths
        ? ['checkout', ref, '--', ...pathspecs(repo, args.paths)]
        : args.create_branch
          ? ['checkout', '-b', ref]
          : ['checkout', ref, '--'];
      await runGit(ctx, cfg, repo, gitArgs);
      const head = await runGit(ctx, cfg, repo, ['rev-parse', 'HEAD']);
      const branch = await runGit(ctx, cfg, repo, ['rev-parse', '--abbrev-ref', 'HEAD']);
      await ctx.audit.record({
        action: 'workspace.git.checkout',
        target: repo.resource,
        decision: 'ok',
        details: { repo: repo.root, ref, paths: args.paths?.length ?? 0, head: head.stdout.text.trim() },
      });
      return {
        repo: repo.root,
        ref,
        branch: branch.stdout.text.trim(),
        head: head.stdout.text.trim(),
        restored_paths: args.paths?.length ?? 0,
      };
    },
  });
