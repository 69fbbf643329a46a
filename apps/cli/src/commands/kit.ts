import type { Command } from 'commander';
import type { GlobalOptions } from './with-runtime.js';

/** Wraps a command action: the action takes the Command first; errors print one line and set the exit code. */
// biome-ignore lint/suspicious/noConfusingVoidType: an action returns an exit code or nothing at all.
export type Act = <A extends unknown[]>(fn: (cmd: Command, ...args: A) => Promise<number | void>) => (...raw: unknown[]) => Promise<void>;

/** What a command file needs from the program to register its commands. */
export interface CommandKit {
  readonly act: Act;
  /** The global options (`--db`, `--json`) as seen from a command. */
  readonly g: (cmd: Command) => GlobalOptions;
}
