import { lstatSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { LibosError, type Right, type ToolContext } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { scrubbedEnv } from './environment.js';
import { fsError, refuse } from './errors.js';
import { findProgram } from './find-program.js';
import { observeExternal } from './observe.js';
import { checkPathText } from './path-text.js';
import { isInside, resolvePath } from './resolve-path.js';
import { runProcess, type RunOutcome } from './run-process.js';
import { workingDirectoryOf } from './working-directory.js';
import { resources } from '@libos/sdk';

/**
 * Settings every git command runs with: no hooks, no fsmonitor command, no pager, no colour, no signing program, paths
 * printed as they are. Together with `--no-ext-diff --no-textconv` on diff-like commands, a `git:` grant runs git
 * and nothing a repository's files could name.
 */
export const SAFE_GIT_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'core.quotePath=false',
  'color.ui=false',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'advice.detachedHead=false',
];

/** The repository an operation is about: its root (real, absolute) and the caller's working directory. */
export interface RepoRef {
  readonly root: string;
  readonly resource: string;
  readonly cwd: string;
}

/** The nearest directory at or above `start` holding a `.git` entry, or null. */
export function findRepoRoot(start: string): string | null {
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      lstatSync(join(dir, '.git'));
      return dir;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw fsError(err, dir, 'path');
    }
    if (dir === dirname(dir)) return null;
  }
}

/**
 * Finds the repository holding `path` (default the working directory) and requires `right` on `git:<root>` before
 * git runs. Not inside a repository is `not_found` (reason `not_a_git_repository`).
 *
 * @example
 * declare const cfg: WorkspaceConfig;
 * const repo = await requireRepo(ctx, cfg, '.', 'read'); // needs git:/srv/app read
 */
export async function requireRepo(ctx: ToolContext, cfg: WorkspaceConfig, path: string, right: Right): Promise<RepoRef> {
  const cwd = await workingDirectoryOf(ctx, cfg.baseDirectory);
  const p = resolvePath(cwd, path, { followFinal: true, field: 'path' });
  const start = p.kind === 'directory' ? p.real : dirname(p.real);
  const root = findRepoRoot(start);
  if (root === null)
    throw refuse('not_found', 'not_a_git_repository', `path: ${p.real} is not inside a git repository`, { field: 'path', path: p.real });
  const resource = resources.git(root);
  await ctx.authority.require(resource, right);
  return { root, resource, cwd };
}

/**
 * Pathspecs for git: each path resolved from the working directory (symlinks included), kept inside the repository
 * (else `invalid_arguments`, reason `outside_repository`), and passed literally (`:(literal)`), never as a glob.
 */
export function pathspecs(repo: RepoRef, paths: readonly string[], field = 'paths'): string[] {
  return paths.map((raw, i) => {
    const f = `${field}[${i}]`;
    checkPathText(f, raw);
    const p = resolvePath(repo.cwd, raw, { followFinal: false, field: f });
    if (!isInside(repo.root, p.real))
      throw refuse('invalid_arguments', 'outside_repository', `${f}: ${p.real} is outside the repository ${repo.root}`, {
        field: f,
        path: p.real,
      });
    const rel = relative(repo.root, p.real);
    return `:(literal)${rel === '' ? '.' : rel}`;
  });
}

/** Refuses a ref, branch or revision argument git could read as an option or that no ref can be. */
export function checkRef(field: string, value: string): string {
  if (value.startsWith('-'))
    throw refuse('invalid_arguments', 'option_like_argument', `${field}: must not start with "-" (git would read it as an option)`, {
      field,
    });
  // eslint-disable-next-line no-control-regex
  if (value === '' || value.length > 256 || /[\u0000-\u0020\u007f]/.test(value)) {
    throw refuse('invalid_arguments', 'option_like_argument', `${field}: must be 1..256 characters without spaces or control characters`, {
      field,
    });
  }
  return value;
}

export interface GitRunOptions {
  readonly maxOutputBytes?: number;
  readonly env?: Readonly<Record<string, string>>;
  /** Exit codes that are results, not failures (default only 0). */
  readonly okCodes?: readonly number[];
  /** Text written to git's standard input (e.g. a commit message with `-F -`). */
  readonly stdin?: string;
}

/** The git executable (absolute), from the settings or the host PATH. */
function gitFile(cfg: WorkspaceConfig): string {
  const file = isAbsolute(cfg.git.program) ? cfg.git.program : findProgram(cfg.git.program, cfg.hostEnv.PATH);
  if (file === null)
    throw refuse('not_found', 'program_not_found', `git: no ${cfg.git.program} on the host PATH; the command did not start`, {
      started: false,
    });
  return file;
}

/**
 * Runs `git <args>` in the repository with the safe settings, a scrubbed environment (no prompts, no editor, no
 * pager) and the git timeout. A timeout is `timeout`, a cancel `cancelled` (both with `details.started = true`),
 * an exit code outside `okCodes` is `conflict` carrying git's message.
 */
export async function runGit(
  ctx: ToolContext,
  cfg: WorkspaceConfig,
  repo: RepoRef,
  args: readonly string[],
  opts: GitRunOptions = {},
): Promise<RunOutcome> {
  const env = {
    ...scrubbedEnv(cfg.hostEnv, cfg.envAllowlist),
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_OPTIONAL_LOCKS: '0',
    ...(opts.env ?? {}),
  };
  const configArgs = SAFE_GIT_CONFIG.flatMap((c) => ['-c', c]);
  const out = await runProcess({
    file: gitFile(cfg),
    args: [...configArgs, '-C', repo.root, ...args],
    argv0: 'git',
    cwd: repo.root,
    env,
    timeoutMs: cfg.git.timeoutSeconds * 1000,
    maxOutputBytes: opts.maxOutputBytes ?? 262_144,
    ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
    signal: ctx.signal,
    killGraceMs: cfg.shell.killGraceMs,
  });
  const what = `git ${args[0] ?? ''}`.trim();
  const details = { started: true, repo: repo.root, command: args[0] ?? null, exit_code: out.exitCode, signal: out.signal };
  if (out.status === 'timed_out')
    throw new LibosError('timeout', `${what} ran past ${cfg.git.timeoutSeconds} s and was killed; it may have changed the repository`, {
      details,
    });
  if (out.status === 'cancelled')
    throw new LibosError('cancelled', `${what} started and was cancelled (killed); it may have changed the repository`, { details });
  if (out.status === 'signalled' || !(opts.okCodes ?? [0]).includes(out.exitCode ?? -1)) {
    const msg = (out.stderr.text.trim() || out.stdout.text.trim()).slice(0, 2_000);
    throw new LibosError('conflict', `${what} failed (exit ${out.exitCode ?? out.signal}): ${msg}`, {
      details: { ...details, stderr: out.stderr.text.slice(-4_000) },
    });
  }
  await observeExternal(ctx);
  return out;
}
