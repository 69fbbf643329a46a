import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { LibosError } from '@libos/sdk';
import { OutputCapture, type CapturedOutput } from './output-capture.js';

/** One program run: an absolute executable, its arguments, where and how long. */
export interface RunSpec {
  /** Absolute path of the executable. */
  readonly file: string;
  readonly args: readonly string[];
  /** `argv[0]` as the program sees it (default `file`). */
  readonly argv0?: string;
  readonly cwd: string;
  /** The whole environment (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** Text written to standard input, then closed (default: no input at all). */
  readonly stdin?: string;
  readonly timeoutMs: number;
  /** Bound of each output stream (head and tail kept). */
  readonly maxOutputBytes: number;
  /** Aborting it kills the process group; the run then ends `cancelled`. */
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL of the process group on timeout or cancel (default 1000 ms). */
  readonly killGraceMs?: number;
}

/** How a started run ended. The program ran: its effects may have happened whatever the status. */
export interface RunOutcome {
  readonly pid: number;
  /** `exited` (an exit code), `signalled` (killed by a signal it did not get from us), `timed_out`, `cancelled`. */
  readonly status: 'exited' | 'signalled' | 'timed_out' | 'cancelled';
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** Processes of the command's group were still alive when its main process ended, and were killed. */
  readonly strayProcessesKilled: boolean;
  readonly stdout: CapturedOutput;
  readonly stderr: CapturedOutput;
}

/** Longest wait for a killed process group to be gone before the run is reported. */
const GROUP_EXIT_WAIT_MS = 2_000;
/** Time to wait for the output pipes after the process group was killed (a process outside the group may hold them). */
const PIPE_DRAIN_MS = 2_000;

/** Process groups of runs still going: killed if the host process exits first, so no command outlives its runtime. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function track(pgid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const g of liveGroups) killGroup(g, 'SIGKILL');
    });
  }
  liveGroups.add(pgid);
}

/** Sends `sig` to every process of group `pgid`. False when the group no longer exists. */
export function killGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** True while group `pgid` has a member that is not a zombie (Linux: read from /proc; elsewhere any member counts). */
function groupAlive(pgid: number): boolean {
  if (!killGroup(pgid, 0)) return false;
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true; // no /proc: the group's existence is all we know
    throw err;
  }
  for (const e of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ESRCH') continue; // the process ended while we looked
      throw err;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/** Waits until no live member of group `pgid` is left (bounded: a signal is delivered at once, death follows soon). */
async function groupGone(pgid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (groupAlive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
}

/** A run that provably never started: the error carries `details.started = false`. */
function notStarted(err: unknown, spec: RunSpec): LibosError {
  const code = (err as NodeJS.ErrnoException).code;
  const details = { started: false, program: spec.argv0 ?? spec.file, errno: code ?? null };
  const why = err instanceof Error ? err.message : String(err);
  if (code === 'ENOENT')
    return new LibosError('not_found', `the command did not start: ${spec.file} or the directory ${spec.cwd} does not exist`, {
      details,
      cause: err,
    });
  if (code === 'EACCES' || code === 'EPERM')
    return new LibosError('permission_denied', `the command did not start: the operating system refused to run ${spec.file} (${code})`, {
      details,
      cause: err,
    });
  if (code === 'E2BIG')
    return new LibosError(
      'invalid_arguments',
      'the command did not start: its arguments and environment are too large for the operating system',
      { details, cause: err },
    );
  return new LibosError('internal_error', `the command did not start: ${why}`, { details, cause: err });
}

/**
 * Runs a program in a process group of its own (a detached spawn), so a timeout or a cancel kills it with every
 * child it started (SIGTERM to the group, SIGKILL after the grace); processes of the group still alive when the main
 * process ends are killed too. Output is captured within the bound, head and tail kept. The promise rejects only when
 * the program provably did not start (`details.started = false`); once it started, every end is a `RunOutcome`.
 *
 * @example
 * const r = await runProcess({ file: '/bin/sh', args: ['-c', 'echo hi'], cwd: '/tmp', env: {}, timeoutMs: 5_000, maxOutputBytes: 4_096 });
 * r.stdout.text; // 'hi\n'
 */
export function runProcess(spec: RunSpec): Promise<RunOutcome> {
  return new Promise<RunOutcome>((resolve, reject) => {
    if (spec.signal?.aborted) {
      reject(
        new LibosError('cancelled', 'the command did not start: the call was cancelled first', {
          details: { started: false, program: spec.argv0 ?? spec.file },
        }),
      );
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(spec.file, [...spec.args], {
        cwd: spec.cwd,
        env: { ...spec.env },
        detached: true,
        stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        argv0: spec.argv0 ?? spec.file,
        windowsHide: true,
      });
    } catch (err) {
      reject(notStarted(err, spec));
      return;
    }
    const stdout = new OutputCapture(spec.maxOutputBytes);
    const stderr = new OutputCapture(spec.maxOutputBytes);
    child.stdout!.on('data', (c: Buffer) => stdout.push(c));
    child.stderr!.on('data', (c: Buffer) => stderr.push(c));
    let pgid = 0;
    let status: RunOutcome['status'] | null = null;
    let exit: { code: number | null; signal: string | null } | null = null;
    let stray = false;
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms));

    const terminate = (why: 'timed_out' | 'cancelled') => {
      if (status !== null || exit !== null) return;
      status = why;
      if (!killGroup(pgid, 'SIGTERM')) return;
      later(spec.killGraceMs ?? 1_000, () => {
        if (exit === null) killGroup(pgid, 'SIGKILL');
      });
    };
    const onAbort = () => terminate('cancelled');
    const finish = () => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      spec.signal?.removeEventListener('abort', onAbort);
      const e = exit ?? { code: null, signal: null };
      const settle = () => {
        liveGroups.delete(pgid);
        resolve({
          pid: pgid,
          status: status ?? (e.signal !== null ? 'signalled' : 'exited'),
          exitCode: e.code,
          signal: e.signal,
          strayProcessesKilled: stray,
          stdout: stdout.result(),
          stderr: stderr.result(),
        });
      };
      // A killed group is reported only once its processes are gone, so "no process left" holds when the call returns.
      if (stray || status !== null) void groupGone(pgid, GROUP_EXIT_WAIT_MS).then(settle, reject);
      else settle();
    };

    child.once('error', (err) => {
      if (pgid === 0) {
        reject(notStarted(err, spec));
        return;
      }
      // After a start, 'error' means a signal could not be sent; the run still ends through 'exit'/'close'.
      stderr.push(Buffer.from(`\n[libos: ${err.message}]\n`));
    });
    child.once('spawn', () => {
      pgid = child.pid!;
      track(pgid);
      later(spec.timeoutMs, () => terminate('timed_out'));
      spec.signal?.addEventListener('abort', onAbort, { once: true });
      if (spec.stdin !== undefined) {
        // A program that exits without reading its input closes the pipe first: EPIPE then only means "not read".
        child.stdin!.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code !== 'EPIPE') stderr.push(Buffer.from(`\n[libos: writing standard input failed: ${err.message}]\n`));
        });
        child.stdin!.end(spec.stdin);
      }
    });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      // Whatever the command left running in its group goes with it.
      if (killGroup(pgid, 0)) {
        stray = true;
        killGroup(pgid, 'SIGKILL');
      }
      later(PIPE_DRAIN_MS, () => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      });
    });
    child.once('close', finish);
  });
}
