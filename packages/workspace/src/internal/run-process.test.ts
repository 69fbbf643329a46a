import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess, type RunSpec } from './run-process.js';
import { isAlive, pidsIn } from './testing/processes.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'libos-run-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sh = (script: string, over: Partial<RunSpec> = {}) =>
  runProcess({
    file: '/bin/sh',
    args: ['-c', script],
    argv0: 'sh',
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 20_000,
    maxOutputBytes: 4_096,
    killGraceMs: 200,
    ...over,
  });

describe('runProcess', () => {
  it('returns the exit code and both streams; a non-zero exit is an outcome', async () => {
    const r = await sh('echo out; echo err >&2; exit 3');
    expect(r).toMatchObject({ status: 'exited', exitCode: 3, signal: null, strayProcessesKilled: false });
    expect(r.stdout.text).toBe('out\n');
    expect(r.stderr.text).toBe('err\n');
  });

  it('runs in cwd with exactly the environment given, and feeds stdin', async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, for the shell to expand.
    const r = await sh('pwd; echo "${SECRET:-unset} $ONLY"; cat', {
      env: { ONLY: 'given', PATH: process.env.PATH ?? '/bin' },
      stdin: 'piped',
    });
    expect(r.stdout.text).toBe(`${dir}\nunset given\npiped`);
  });

  it('a command sleeping past its timeout is killed with its children: timed_out, and no pid it started is left', async () => {
    const r = await sh('sleep 30 & echo $!; (sleep 30; echo never) & echo $!; echo $$; wait', { timeoutMs: 1_000 });
    expect(r.status).toBe('timed_out');
    const pids = pidsIn(r.stdout.text);
    expect(pids).toHaveLength(3);
    expect(pids).toContain(r.pid);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(r.stdout.text).not.toContain('never');
  });

  it('a child that ignores SIGTERM is killed after the grace', async () => {
    const r = await sh("trap '' TERM; sleep 30 & echo $!; wait", { timeoutMs: 500 });
    expect(r.status).toBe('timed_out');
    for (const pid of pidsIn(r.stdout.text)) expect(isAlive(pid)).toBe(false);
  });

  it('processes left running when the main process exits are killed (stray_processes_killed)', async () => {
    const r = await sh('sleep 30 >/dev/null 2>&1 & echo $!; exit 0');
    expect(r).toMatchObject({ status: 'exited', exitCode: 0, strayProcessesKilled: true });
    for (const pid of pidsIn(r.stdout.text)) expect(isAlive(pid)).toBe(false);
  });

  it('a cancel kills the group and ends cancelled', async () => {
    const ac = new AbortController();
    const running = sh('sleep 30 & echo $!; echo ready >&2; wait', { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    const r = await running;
    expect(r.status).toBe('cancelled');
    for (const pid of pidsIn(r.stdout.text)) expect(isAlive(pid)).toBe(false);
  });

  it('10 MB of output is capped to the bound, head and tail kept', async () => {
    const r = await sh("printf 'FIRST'; head -c 10485760 /dev/zero | tr '\\0' 'x'; printf 'LAST'", { maxOutputBytes: 2_048 });
    expect(r.status).toBe('exited');
    expect(r.stdout.total_bytes).toBe(10_485_760 + 9);
    expect(r.stdout.truncated).toBe(true);
    expect(r.stdout.text.startsWith('FIRSTxxx')).toBe(true);
    expect(r.stdout.text.endsWith('xxxLAST')).toBe(true);
    expect(Buffer.byteLength(r.stdout.text)).toBeLessThan(2_200);
  });

  it('a program that does not exist provably did not start: not_found with started false', async () => {
    await expect(
      runProcess({ file: join(dir, 'no-such-program'), args: [], cwd: dir, env: {}, timeoutMs: 1_000, maxOutputBytes: 64 }),
    ).rejects.toMatchObject({
      code: 'not_found',
      details: { started: false },
    });
  });

  it('an already-cancelled signal starts nothing', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(sh('echo hi', { signal: ac.signal })).rejects.toMatchObject({ code: 'cancelled', details: { started: false } });
  });
});
