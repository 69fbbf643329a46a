import type { ToolContext } from '@libos/sdk';
import { refuse } from './errors.js';
import { findProgram, isExecutableFile } from './find-program.js';
import { resolvePath } from './resolve-path.js';
import { resources } from '@libos/sdk';

/** A program a command runs: the `shell:` resource that grants it and the file that is executed. */
export interface ProgramRef {
  /** The program as its grant names it: a bare name (`npm`) or an absolute real path. */
  readonly name: string;
  readonly resource: string;
  /** The executable that runs (absolute). */
  readonly file: string;
}

const BARE_NAME = /^[A-Za-z0-9._+-]{1,255}$/;

/**
 * Requires `execute` on `shell:<program>` before anything runs, then finds the executable: a bare name is looked up
 * on the command's PATH (absolute entries only) and granted as `shell:<name>`; a name with a `/` is resolved from
 * `cwd` (symlinks included) and granted as `shell:<real path>`. A missing program is `not_found` with
 * `details.started = false` (it provably never ran).
 *
 * @example
 * const prog = await requireProgram(ctx, 'npm', '/srv/app', process.env.PATH); // needs shell:npm execute
 */
export async function requireProgram(ctx: ToolContext, argv0: string, cwd: string, pathVar: string | undefined): Promise<ProgramRef> {
  if (argv0.includes('/')) {
    const p = resolvePath(cwd, argv0, { followFinal: true, field: 'argv[0]' });
    const resource = resources.shell(p.real);
    await ctx.authority.require(resource, 'execute');
    if (p.kind !== 'file' || !isExecutableFile(p.real)) {
      throw refuse('not_found', 'program_not_found', `argv[0]: ${p.real} is not an executable file; the command did not start`, {
        field: 'argv',
        started: false,
        program: p.real,
      });
    }
    return { name: p.real, resource, file: p.real };
  }
  if (!BARE_NAME.test(argv0))
    throw refuse('invalid_arguments', 'program_not_found', `argv[0]: a program name must match ${BARE_NAME} or be a path with "/"`, {
      field: 'argv',
    });
  const resource = resources.shell(argv0);
  await ctx.authority.require(resource, 'execute');
  const file = findProgram(argv0, pathVar);
  if (file === null)
    throw refuse('not_found', 'program_not_found', `argv[0]: no program ${argv0} on PATH; the command did not start`, {
      field: 'argv',
      started: false,
      program: argv0,
    });
  return { name: argv0, resource, file };
}
