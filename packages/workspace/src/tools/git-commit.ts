import { defineTool, z, type ToolContext } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { requireRepo, runGit, type RepoRef } from '../internal/git.js';
import { checkText, MAX_PATH_CHARS } from '../internal/path-text.js';

/** Author and committer variables, when neither the repository nor the host names a user. */
async function identityEnv(ctx: ToolContext, cfg: WorkspaceConfig, repo: RepoRef): Promise<Record<string, string>> {
  const email = await runGit(ctx, cfg, repo, ['config', '--get', 'user.email'], { okCodes: [0, 1] });
  const name = await runGit(ctx, cfg, repo, ['config', '--get', 'user.name'], { okCodes: [0, 1] });
  const env: Record<string, string> = {};
  if (email.exitCode !== 0) Object.assign(env, { GIT_AUTHOR_EMAIL: cfg.git.identity.email, GIT_COMMITTER_EMAIL: cfg.git.identity.email });
  if (name.exitCode !== 0) Object.assign(env, { GIT_AUTHOR_NAME: cfg.git.identity.name, GIT_COMMITTER_NAME: cfg.git.identity.name });
  return env;
}

/**
 * `git_commit`: commits what is staged, with hooks and signing programs off. When neither the repository nor the host
 * configures a user, the plugin's identity (default `libOS agent <agent@libos.invalid>`) is used. Needs `git:<repo>`
 * write.
 */
export const gitCommit = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'git_commit',
    description:
      'Commit the staged changes of the repository holding path with message (hooks do not run). Returns the new commit hash. ' +
      'Nothing staged is an error unless allow_empty. Needs write on git:<repository root>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      message: z.string().min(1).max(16_000).describe('the commit message'),
      allow_empty: z.boolean().default(false),
    }),
    policy: { sideEffects: true },
    async run(args, ctx) {
      checkText('message', args.message);
      const repo = await requireRepo(ctx, cfg, args.path, 'write');
      const env = await identityEnv(ctx, cfg, repo);
      await runGit(
        ctx,
        cfg,
        repo,
        ['commit', '--no-verify', '--cleanup=strip', '-F', '-', ...(args.allow_empty ? ['--allow-empty'] : [])],
        { env, stdin: args.message },
      );
      const head = await runGit(ctx, cfg, repo, ['rev-parse', 'HEAD']);
      const branch = await runGit(ctx, cfg, repo, ['rev-parse', '--abbrev-ref', 'HEAD']);
      const commit = head.stdout.text.trim();
      await ctx.audit.record({
        action: 'workspace.git.commit',
        target: repo.resource,
        decision: 'ok',
        details: { repo: repo.root, commit, branch: branch.stdout.text.trim() },
      });
      return { repo: repo.root, commit, branch: branch.stdout.text.trim(), subject: args.message.split('\n')[0]! };
    },
  });
