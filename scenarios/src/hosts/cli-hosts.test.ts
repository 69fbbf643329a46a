// The libos command as one host of many (issue 15, K-15.13): `--host-id` (or LIBOS_HOST_ID) opens a postgres://
// store as a host, so `libos serve --provider script` runs the trees it claims while short commands from another
// terminal (or machine) join as hosts of their own; without it they get the single-host lease and are refused.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const BIN = fileURLToPath(new URL('../../../apps/cli/dist/index.js', import.meta.url));
const unavailable = (await probePostgres(PG_URL)) ?? (existsSync(BIN) ? null : `${BIN} is not built`);
const { schema, url } = freshSchema('t_clihosts');
const dir = mkdtempSync(join(tmpdir(), 'libos-clihosts-'));

const libos = (...args: string[]) => {
  const { LIBOS_HOST_ID: _, ...env } = process.env;
  const r = spawnSync(process.execPath, [BIN, '--db', url, ...args], { encoding: 'utf8', env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const json = (...args: string[]) => {
  const r = libos('--json', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

describe.skipIf(unavailable !== null)('[K-15.13] libos --host-id on a shared PostgreSQL store', () => {
  const children: ReturnType<typeof spawn>[] = [];
  afterAll(async () => {
    for (const c of children) c.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 500));
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('[K-15.13] a served host runs what a CLI host spawns; a command without --host-id is refused store_locked', async () => {
    const script = join(dir, 'turns.json');
    writeFileSync(script, JSON.stringify({ processes: { '*': [[{ tool: 'process_exit', args: {} }]] } }));
    const serve = spawn(process.execPath, [BIN, '--db', url, '--host-id', 'served', 'serve', '--provider', 'script', '--script', script]);
    children.push(serve);
    let out = '';
    serve.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    serve.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const end = Date.now() + 20_000;
    while (!out.includes('"url"')) {
      if (Date.now() > end || serve.exitCode !== null) throw new Error(`libos serve did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const pid = json('--host-id', 'terminal', 'spawn', '--goal', 'run by the served host').pid as string;
    let status = '';
    for (let i = 0; i < 200 && status !== 'exited'; i++) {
      status = json('--host-id', 'terminal', 'show', pid).status;
      if (status !== 'exited') await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('exited');
    const took = json('--host-id', 'terminal', 'audit', '--action', 'process.exit') as { actor: string }[];
    expect(took.map((a) => a.actor)).toEqual([pid]);

    const refused = libos('ps');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('store_locked');
  }, 60_000);
});
