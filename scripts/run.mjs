#!/usr/bin/env node
// Entry point of the root npm scripts. Installs with the pinned pnpm when needed (no global install),
// then runs the job: `demo`, `test`, `build`, `typecheck` or `bench`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PNPM = ['-y', 'pnpm@12.4.2'];
const job = process.argv[2];
const rest = process.argv.slice(3);

process.env.TURBO_TELEMETRY_DISABLED ??= '1';
process.env.DO_NOT_TRACK ??= '1';

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}
function must(cmd, args) {
  const code = run(cmd, args);
  if (code !== 0) {
    console.error(`\n${cmd} ${args.join(' ')} failed with exit code ${code}`);
    process.exit(code);
  }
}
function ensureInstalled() {
  const marker = `${root}/node_modules/.modules.yaml`;
  const sqlite = `${root}/packages/kernel/node_modules/better-sqlite3/build/Release/better_sqlite3.node`;
  if (existsSync(marker) && existsSync(sqlite)) return;
  console.log('Installing dependencies with pnpm 12.4.2 (better-sqlite3 compiles from source: about a minute)...');
  must('npx', [...PNPM, 'install', '--frozen-lockfile']);
}
function build() {
  must('npx', [...PNPM, 'exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);
}

/** Whether a PostgreSQL server accepts a TCP connection at LIBOS_TEST_PG_URL's host and port (default 127.0.0.1:5432). */
function postgresAnswers() {
  const url = new URL(process.env.LIBOS_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  const probe = `require('node:net').connect({ host: ${JSON.stringify(url.hostname || '127.0.0.1')}, port: ${Number(url.port || 5432)} })
    .on('connect', () => process.exit(0)).on('error', () => process.exit(1)).setTimeout(2000, () => process.exit(1));`;
  return spawnSync(process.execPath, ['-e', probe], { stdio: 'ignore', timeout: 5000 }).status === 0;
}

/** Lint and format check, types, then the vitest suite (both projects); ends with the `N passed, N failed` line .ci/run reads. */
function test() {
  // Biome: lint and format check of the whole tree (biome.jsonc); a finding counts as one failure, the tests still run.
  const lintOk = run('npx', [...PNPM, 'exec', 'biome', 'check', '--error-on-warnings', '.']) === 0;
  if (!lintOk) console.error('\nbiome check failed (see above; `npx biome check --write .` fixes formatting)');
  build();
  // Types are checked too (tests included); a type error counts as one failure but the tests still run.
  const typesOk = run('npx', [...PNPM, 'exec', 'turbo', 'run', 'typecheck', '--output-logs=errors-only']) === 0;
  if (!typesOk) console.error('\ntypecheck failed (see above)');
  // Two vitest projects (vitest.config.ts, issue 15): `sqlite`, the whole suite, and `postgres`, the tests that open a
  // runtime on the in-memory store, again on PostgreSQL. Without a server only `sqlite` runs, and the run says so once.
  const projects = postgresAnswers() ? [] : ['--project', 'sqlite'];
  if (projects.length) console.log('postgres suite: skipped (no server; see README)');
  const out = `${root}/.vitest-results.json`;
  rmSync(out, { force: true });
  const reporters = ['--reporter=default', '--reporter=json', `--outputFile.json=${out}`];
  const code = run('npx', [...PNPM, 'exec', 'vitest', 'run', ...projects, ...reporters, ...rest]);
  let passed = 0;
  let failed = 0;
  if (existsSync(out)) {
    const r = JSON.parse(readFileSync(out, 'utf8'));
    passed = r.numPassedTests ?? 0;
    failed = (r.numFailedTests ?? 0) + (code !== 0 && (r.numFailedTests ?? 0) === 0 ? 1 : 0);
  } else failed = 1;
  if (!typesOk) failed += 1;
  if (!lintOk) failed += 1;
  console.log(`${passed} passed, ${failed} failed`);
  return code !== 0 ? code : typesOk && lintOk ? 0 : 1;
}

ensureInstalled();
switch (job) {
  case 'build':
    build();
    break;
  case 'typecheck':
    // From source (tsconfig.base.json paths): no build needed.
    must('npx', [...PNPM, 'exec', 'turbo', 'run', 'typecheck', '--output-logs=errors-only']);
    break;
  case 'demo':
    build();
    process.exit(run('node', ['apps/cli/dist/index.js', 'demo', ...rest]));
    break;
  case 'test':
    process.exit(test());
    break;
  case 'bench':
    build();
    process.exit(run('node', ['bench/run.mjs', ...rest]));
    break;
  default:
    console.error('usage: node scripts/run.mjs demo|test|build|typecheck|bench');
    process.exit(2);
}
