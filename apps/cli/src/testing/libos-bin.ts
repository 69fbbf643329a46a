import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/** The real binary, as a user runs it (`npm test` builds it first). */
export const BIN = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run "npm run build" (npm test builds it) before these tests`);
}

/** A fresh temp folder with a store path in it. */
export function tempStore(prefix: string): { dir: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, db: join(dir, 'libos.db') };
}

/** Runs the binary on `db` (synchronously); `env` adds to (or, with undefined, removes from) the environment. */
export function libosOn(db: string, env: Record<string, string | undefined> = {}) {
  const run = (...args: string[]): Ran => {
    const r = spawnSync(process.execPath, [BIN, '--db', db, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const json = (...args: string[]) => {
    const r = run('--json', ...args);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout);
  };
  return { run, json };
}

/** Expects a refusal: the exit code, nothing on stdout, exactly one line on stderr containing `text`. */
export function expectRefused(r: Ran, code: 1 | 2, text: string): void {
  expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code, stdout: '' });
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toContain(text);
}

/** Writes a script file into `dir` and returns its path. */
export function writeScript(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** A running binary (asynchronous): its output so far, a way to wait for text, a signal, and its exit. */
export function startLibos(db: string, args: readonly string[], env: Record<string, string | undefined> = {}) {
  const child = spawn(process.execPath, [BIN, '--db', db, ...args], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    exited,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    /** Resolves once stdout contains `text`; rejects if the process ends first (so a broken follow fails, not hangs). */
    async waitFor(text: string): Promise<void> {
      while (!stdout.includes(text)) {
        if (done)
          throw new Error(`libos ${args.join(' ')} ended before printing ${JSON.stringify(text)}; stdout: ${stdout}; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
