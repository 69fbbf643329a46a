import { defineTool, LibosError, sha256Hex, canonicalJson, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { scrubbedEnv } from '../internal/environment.js';
import { refuse } from '../internal/errors.js';
import { requireFs } from '../internal/fs-access.js';
import { observeExternal } from '../internal/observe.js';
import { checkText, MAX_PATH_CHARS } from '../internal/path-text.js';
import { requireProgram } from '../internal/program.js';
import { runProcess } from '../internal/run-process.js';

const ARG_CHARS = 32_768;

const outputSchema = z.object({ text: z.string(), total_bytes: z.number(), truncated: z.boolean(), omitted_bytes: z.number() });

/**
 * `run_shell_command`: runs one program (`argv`, no shell) or a shell string (`command`, run by `sh -c`) in a
 * directory, with a timeout, a scrubbed environment and bounded output (head and tail of each stream). Needs
 * `execute` on `shell:<program>` (`shell:sh` for a shell string; `shell:*` covers every program) and `write` on
 * `fs:<real cwd>`. The command runs in its own process group: on timeout or cancel the whole group is killed, and
 * whatever the group leaves running when its main process ends is killed too. A non-zero exit is a result, not an
 * error; a cancel after the start is a `cancelled` error whose details say it started.
 */
export const runShellCommand = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'run_shell_command',
    description:
      'Run a program (argv, no shell) or a shell string (command, via sh -c) in cwd (default your working directory). ' +
      'Returns status (exited, signalled, timed_out), exit_code, signal, and stdout/stderr capped to max_output_bytes each ' +
      '(head and tail kept; redirect to a file and read_file it for everything). ' +
      `Timeout default ${cfg.shell.defaultTimeoutSeconds} s, max ${cfg.shell.maxTimeoutSeconds} s: the process group is killed. ` +
      'Needs execute on shell:<program> (shell:sh for command) and write on fs:<cwd>.',
    input: z.object({
      argv: z
        .array(z.string().max(ARG_CHARS))
        .min(1)
        .max(256)
        .optional()
        .describe('program and arguments, e.g. ["npm", "test"]; no shell expansion'),
      command: z
        .string()
        .min(1)
        .max(ARG_CHARS)
        .optional()
        .describe('a shell string run by sh -c, e.g. "npm test 2>&1 | tail -50"; needs shell:sh'),
      cwd: z.string().min(1).max(MAX_PATH_CHARS).optional().describe('directory to run in (default your working directory)'),
      timeout_seconds: z.number().min(1).max(cfg.shell.maxTimeoutSeconds).default(cfg.shell.defaultTimeoutSeconds),
      max_output_bytes: z
        .number()
        .int()
        .min(64)
        .max(cfg.shell.maxOutputBytes)
        .default(cfg.shell.defaultOutputBytes)
        .describe('bound of each of stdout and stderr'),
      env: z
        .record(z.string(), z.string())
        .optional()
        .describe('extra environment variables (the host environment is scrubbed to an allowlist)'),
      stdin: z.string().max(1_000_000).optional().describe('text written to standard input (default: none)'),
    }),
    output: z.object({
      status: z.enum(['exited', 'signalled', 'timed_out']),
      exit_code: z.number().nullable(),
      signal: z.string().nullable(),
      timed_out: z.boolean(),
      pid: z.number(),
      program: z.string(),
      cwd: z.string(),
      stray_processes_killed: z.boolean(),
      stdout: outputSchema,
      stderr: outputSchema,
    }),
    policy: { sideEffects: true },
    async run(args, ctx) {
      if ((args.argv === undefined) === (args.command === undefined)) {
        throw refuse(
          'invalid_arguments',
          'conflicting_arguments',
          'argv, command: give exactly one (argv runs a program directly, command runs sh -c)',
          { field: 'argv' },
        );
      }
      const words = args.argv ?? [args.command!];
      words.forEach((w, i) => {
        const field = args.argv ? `argv[${i}]` : 'command';
        if (w.includes('\u0000')) throw refuse('invalid_arguments', 'nul_byte', `${field}: contains a NUL byte`, { field });
        checkText(field, w);
      });
      if (args.stdin !== undefined) checkText('stdin', args.stdin);
      const env = scrubbedEnv(cfg.hostEnv, cfg.envAllowlist, args.env ?? {});
      const dir = await requireFs(ctx, cfg.baseDirectory, args.cwd ?? '.', ['write'], { field: 'cwd' });
      const program = await requireProgram(ctx, args.argv ? args.argv[0]! : 'sh', dir.real, env.PATH);
      if (dir.kind === null)
        throw refuse('not_found', 'not_found', `cwd: ${dir.real} does not exist; the command did not start`, {
          field: 'cwd',
          path: dir.real,
          started: false,
        });
      if (dir.kind !== 'directory')
        throw refuse('invalid_arguments', 'not_a_directory', `cwd: ${dir.real} is not a directory; the command did not start`, {
          field: 'cwd',
          path: dir.real,
          started: false,
        });
      const rest = args.argv ? args.argv.slice(1) : ['-c', args.command!];
      const out = await runProcess({
        file: program.file,
        args: rest,
        argv0: args.argv ? args.argv[0]! : 'sh',
        cwd: dir.real,
        env,
        ...(args.stdin !== undefined ? { stdin: args.stdin } : {}),
        timeoutMs: args.timeout_seconds * 1000,
        maxOutputBytes: args.max_output_bytes,
        signal: ctx.signal,
        killGraceMs: cfg.shell.killGraceMs,
      });
      const summary = {
        program: program.name,
        file: program.file,
        cwd: dir.real,
        pid: out.pid,
        argv_sha256: sha256Hex(canonicalJson(words)),
        words: words.length,
        status: out.status,
        exit_code: out.exitCode,
        signal: out.signal,
        stdout_bytes: out.stdout.total_bytes,
        stderr_bytes: out.stderr.total_bytes,
        stray_processes_killed: out.strayProcessesKilled,
      };
      if (out.status === 'cancelled') {
        throw new LibosError(
          'cancelled',
          `the command started (pid ${out.pid}) and was cancelled: its process group was killed, and effects it had may remain`,
          {
            details: { started: true, ...summary, stdout_tail: out.stdout.text.slice(-2_000), stderr_tail: out.stderr.text.slice(-2_000) },
          },
        );
      }
      await ctx.audit.record({ action: 'workspace.shell.run', target: program.resource, decision: out.status, details: summary });
      await observeExternal(ctx);
      return {
        status: out.status,
        exit_code: out.exitCode,
        signal: out.signal,
        timed_out: out.status === 'timed_out',
        pid: out.pid,
        program: program.name,
        cwd: dir.real,
        stray_processes_killed: out.strayProcessesKilled,
        stdout: out.stdout,
        stderr: out.stderr,
      };
    },
  });
