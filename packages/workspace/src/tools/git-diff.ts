import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { checkRef, pathspecs, requireRepo, runGit } from '../internal/git.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';

/** Bounds of diff-like output (head and tail kept). */
export const GIT_OUTPUT_LIMITS = { defaultBytes: 32_768, maxBytes: 65_536 } as const;

/** `git_diff`: the worktree (or staged) changes, against the index or a ref, optionally for some paths. Needs `git:<repo>` read. */
export const gitDiff = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_diff',
    description:
      'Diff of the repository holding path: unstaged changes by default, staged with staged=true, or against ref. paths limits it; ' +
      'stat=true gives a summary. Output capped (head and tail). Needs read on git:<repository root>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      staged: z.boolean().default(false),
      ref: z.string().min(1).max(256).optional().describe('compare with this commit, branch or tag'),
      paths: z.array(z.string().min(1).max(MAX_PATH_CHARS)).max(256).optional(),
      stat: z.boolean().default(false),
      max_output_bytes: z.number().int().min(256).max(GIT_OUTPUT_LIMITS.maxBytes).default(GIT_OUTPUT_LIMITS.defaultBytes),
    }),
    async run(args, ctx) {
      const repo = await requireRepo(ctx, cfg, args.path, 'read');
      const ref = args.ref === undefined ? [] : [checkRef('ref', args.ref)];
      const specs = pathspecs(repo, args.paths ?? []);
      const gitArgs = [
        'diff',
        '--no-ext-diff',
        '--no-textconv',
        '--no-color',
        ...(args.staged ? ['--cached'] : []),
        ...(args.stat ? ['--stat'] : []),
        ...ref,
        '--',
        ...specs,
      ];
      const out = await runGit(ctx, cfg, repo, gitArgs, { maxOutputBytes: args.max_output_bytes });
      return {
        repo: repo.root,
        diff: out.stdout.text,
        total_bytes: out.stdout.total_bytes,
        truncated: out.stdout.truncated,
        omitted_bytes: out.stdout.omitted_bytes,
      };
    },
  });
