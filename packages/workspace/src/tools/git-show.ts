import { relative } from 'node:path';
import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { checkRef, requireRepo, runGit } from '../internal/git.js';
import { checkPathText, MAX_PATH_CHARS } from '../internal/path-text.js';
import { isInside, resolvePath } from '../internal/resolve-path.js';
import { GIT_OUTPUT_LIMITS } from './git-diff.js';

/** `git_show`: a commit (message, stat and patch), or one file as it was at a ref. Needs `git:<repo>` read. */
export const gitShow = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_show',
    description:
      'Show a commit of the repository holding path (default HEAD): message, stat and patch; ' +
      "or, with file, that file's content at ref. Output capped (head and tail). Needs read on git:<repository root>.",
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      ref: z.string().min(1).max(256).default('HEAD'),
      file: z.string().min(1).max(MAX_PATH_CHARS).optional().describe('show this file as it was at ref'),
      max_output_bytes: z.number().int().min(256).max(GIT_OUTPUT_LIMITS.maxBytes).default(GIT_OUTPUT_LIMITS.defaultBytes),
    }),
    async run(args, ctx) {
      const repo = await requireRepo(ctx, cfg, args.path, 'read');
      const ref = checkRef('ref', args.ref);
      let gitArgs: string[];
      if (args.file !== undefined) {
        checkPathText('file', args.file);
        const p = resolvePath(repo.cwd, args.file, { followFinal: false, field: 'file' });
        if (!isInside(repo.root, p.real))
          throw refuse('invalid_arguments', 'outside_repository', `file: ${p.real} is outside the repository ${repo.root}`, {
            field: 'file',
            path: p.real,
          });
        gitArgs = ['show', '--no-textconv', `${ref}:${relative(repo.root, p.real)}`];
      } else gitArgs = ['show', '--no-ext-diff', '--no-textconv', '--no-color', '--stat', '--patch', ref, '--'];
      const out = await runGit(ctx, cfg, repo, gitArgs, { maxOutputBytes: args.max_output_bytes });
      return {
        repo: repo.root,
        ref,
        text: out.stdout.text,
        total_bytes: out.stdout.total_bytes,
        truncated: out.stdout.truncated,
        omitted_bytes: out.stdout.omitted_bytes,
      };
    },
  });
