import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { checkRef, requireRepo, runGit } from '../internal/git.js';
import { BRANCH_FORMAT, parseBranches } from '../internal/git-parse.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';

/** `git_branch`: lists local branches (`git:<repo>` read), or creates one first (`git:<repo>` write). */
export const gitBranch = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_branch',
    description:
      'List the local branches of the repository holding path (current marked); with create, first create that branch at start_point ' +
      '(default HEAD) without switching to it. Needs read on git:<repository root>, and write to create.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      create: z.string().min(1).max(256).optional().describe('name of a branch to create'),
      start_point: z.string().min(1).max(256).optional().describe('commit or branch the new branch starts at (default HEAD)'),
    }),
    async run(args, ctx) {
      const repo = await requireRepo(ctx, cfg, args.path, args.create === undefined ? 'read' : 'write');
      if (args.create !== undefined) {
        const start = args.start_point === undefined ? [] : [checkRef('start_point', args.start_point)];
        await runGit(ctx, cfg, repo, ['branch', checkRef('create', args.create), ...start]);
        await ctx.audit.record({
          action: 'workspace.git.branch',
          target: repo.resource,
          decision: 'ok',
          details: { repo: repo.root, created: args.create },
        });
      }
      const out = await runGit(ctx, cfg, repo, ['branch', '--list', `--format=${BRANCH_FORMAT}`], { maxOutputBytes: 1_048_576 });
      return { repo: repo.root, created: args.create ?? null, branches: parseBranches(out.stdout.text) };
    },
  });
