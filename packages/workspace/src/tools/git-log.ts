import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { checkRef, pathspecs, requireRepo, runGit } from '../internal/git.js';
import { LOG_FORMAT, parseLog } from '../internal/git-parse.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';

/** `git_log`: recent commits (hash, parents, author, date, subject). Needs `git:<repo>` read. */
export const gitLog = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_log',
    description:
      'Recent commits of the repository holding path: hash, parents, author, ISO date, subject; newest first. ref and paths narrow ' +
      'it. Needs read on git:<repository root>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      max_count: z.number().int().min(1).max(200).default(20),
      ref: z.string().min(1).max(256).optional(),
      paths: z.array(z.string().min(1).max(MAX_PATH_CHARS)).max(256).optional(),
    }),
    async run(args, ctx) {
      const repo = await requireRepo(ctx, cfg, args.path, 'read');
      const ref = args.ref === undefined ? [] : [checkRef('ref', args.ref)];
      const head = await runGit(ctx, cfg, repo, ['rev-parse', '--verify', '--quiet', 'HEAD'], { okCodes: [0, 1] });
      if (args.ref === undefined && head.exitCode !== 0) return { repo: repo.root, commits: [] };
      const out = await runGit(
        ctx,
        cfg,
        repo,
        [
          'log',
          '--no-color',
          `--max-count=${args.max_count}`,
          `--format=${LOG_FORMAT}`,
          ...ref,
          '--',
          ...pathspecs(repo, args.paths ?? []),
        ],
        {
          maxOutputBytes: 1_048_576,
        },
      );
      return { repo: repo.root, commits: parseLog(out.stdout.text) };
    },
  });
