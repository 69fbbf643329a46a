import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { requireRepo, runGit } from '../internal/git.js';
import { parseStatus } from '../internal/git-parse.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';

/** `git_status`: branch, upstream distance and changed paths of the repository holding `path`. Needs `git:<repo>` read. */
export const gitStatus = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_status',
    description:
      'Status of the git repository holding path (default your working directory): branch, ahead/behind, and each changed or ' +
      'untracked path with its index and worktree codes. Needs read on git:<repository root>.',
    input: z.object({ path: z.string().min(1).max(MAX_PATH_CHARS).default('.') }),
    async run(args, ctx) {
      const repo = await requireRepo(ctx, cfg, args.path, 'read');
      const out = await runGit(ctx, cfg, repo, ['status', '--porcelain=v1', '--branch', '-z', '--untracked-files=all'], {
        maxOutputBytes: 1_048_576,
      });
      const report = parseStatus(out.stdout.text);
      return { repo: repo.root, ...report, clean: report.entries.length === 0, truncated: out.stdout.truncated };
    },
  });
