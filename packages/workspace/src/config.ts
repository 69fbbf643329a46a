import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_ENV_ALLOWLIST } from './env-allowlist.js';

/** Options of the workspace plugin (every field optional). */
export interface WorkspaceOptions {
  /**
   * What a relative working directory is relative to: a process spawned without one has `.`, this directory.
   * Default: the host's current directory when the plugin is created.
   */
  readonly baseDirectory?: string;
  /** Host environment variables a command inherits (default `DEFAULT_ENV_ALLOWLIST`); all others are dropped. */
  readonly envAllowlist?: readonly string[];
  /** The host environment to take them from (default `process.env`). */
  readonly hostEnv?: NodeJS.ProcessEnv;
  /** Command bounds. */
  readonly shell?: Partial<ShellLimits>;
  /** Git settings. */
  readonly git?: Partial<GitSettings>;
}

export interface ShellLimits {
  /** Timeout when a call names none (default 60 s). */
  readonly defaultTimeoutSeconds: number;
  /** Largest timeout a call may ask for (default 600 s). */
  readonly maxTimeoutSeconds: number;
  /** Bound of each output stream when a call names none (default 16 KiB: head and tail halves). */
  readonly defaultOutputBytes: number;
  /** Largest bound a call may ask for (default 64 KiB). */
  readonly maxOutputBytes: number;
  /** SIGTERM-to-SIGKILL grace on timeout or cancel (default 1000 ms). */
  readonly killGraceMs: number;
}

export interface GitSettings {
  /** The git executable: a name looked up on the host PATH, or an absolute path (default `git`). */
  readonly program: string;
  /** Timeout of one git command (default 60 s). */
  readonly timeoutSeconds: number;
  /** Author and committer when the repository and the host configure none. */
  readonly identity: { readonly name: string; readonly email: string };
}

/** The settled configuration every tool reads. */
export interface WorkspaceConfig {
  readonly baseDirectory: string;
  readonly envAllowlist: readonly string[];
  readonly hostEnv: NodeJS.ProcessEnv;
  readonly shell: ShellLimits;
  readonly git: GitSettings;
}

export const DEFAULT_SHELL_LIMITS: ShellLimits = {
  defaultTimeoutSeconds: 60,
  maxTimeoutSeconds: 600,
  defaultOutputBytes: 16_384,
  maxOutputBytes: 65_536,
  killGraceMs: 1_000,
};
export const DEFAULT_GIT_SETTINGS: GitSettings = {
  program: 'git',
  timeoutSeconds: 60,
  identity: { name: 'libOS agent', email: 'agent@libos.invalid' },
};

const positive = (v: number, what: string) => {
  if (!(Number.isFinite(v) && v > 0)) throw new TypeError(`workspace: ${what} must be a positive number (got ${v})`);
};

/**
 * Settles options into a configuration, refusing values that make no sense (a TypeError naming the option).
 *
 * @example
 * settleConfig({ shell: { maxTimeoutSeconds: 120 } }).shell.defaultTimeoutSeconds; // 60
 */
export function settleConfig(options: WorkspaceOptions = {}): WorkspaceConfig {
  const base = options.baseDirectory ?? process.cwd();
  if (!isAbsolute(base)) throw new TypeError(`workspace: baseDirectory must be absolute (got ${base})`);
  const shell = { ...DEFAULT_SHELL_LIMITS, ...(options.shell ?? {}) };
  for (const [k, v] of Object.entries(shell)) positive(v, `shell.${k}`);
  if (shell.defaultTimeoutSeconds > shell.maxTimeoutSeconds)
    throw new TypeError('workspace: shell.defaultTimeoutSeconds must not exceed shell.maxTimeoutSeconds');
  if (shell.defaultOutputBytes > shell.maxOutputBytes)
    throw new TypeError('workspace: shell.defaultOutputBytes must not exceed shell.maxOutputBytes');
  if (!Number.isInteger(shell.maxOutputBytes) || shell.maxOutputBytes < 64)
    throw new TypeError('workspace: shell.maxOutputBytes must be an integer >= 64');
  const git = { ...DEFAULT_GIT_SETTINGS, ...(options.git ?? {}) };
  positive(git.timeoutSeconds, 'git.timeoutSeconds');
  if (git.program === '') throw new TypeError('workspace: git.program must not be empty');
  return {
    baseDirectory: resolve(base),
    envAllowlist: options.envAllowlist ?? DEFAULT_ENV_ALLOWLIST,
    hostEnv: options.hostEnv ?? process.env,
    shell,
    git,
  };
}
