import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { inMemoryRuntimeTestFiles, testFiles } from './scenarios/src/support/runtime-test-files.js';

const root = fileURLToPath(new URL('.', import.meta.url));
const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const srcFolders = (parent: string) => readdirSync(src(`./${parent}`)).map((d) => `${parent}/${d}/src`);

/**
 * Test files the source scan picks (they reach a helper that can open `:memory:`) but that are about SQLite itself, or
 * open no in-memory runtime at all, so the `postgres` project leaves them out (each with why; the setup file fails a
 * file there that opens none). Everything else that opens such a runtime runs on both dialects.
 */
const SQLITE_ONLY: Record<string, string> = {
  'scenarios/src/store-postgres-runtime.test.ts': 'on PostgreSQL already (its own schemas); its harness runtime is the SQLite side',
  'scenarios/src/robustness/redo-replay.test.ts': "SQLite's redo log, replayed after a SIGKILL on a file",
  'scenarios/src/robustness/crash-invariants.test.ts': 'the crash checks on a SQLite file store',
  'scenarios/src/checkpoints-crash.test.ts': 'a SIGKILL during a restore, on a SQLite file',
  'scenarios/src/session-compaction-crash.test.ts': 'a SIGKILL during a compaction, on a SQLite file',
  'scenarios/src/session-compaction-reopen.test.ts': 'close and reopen of a SQLite file',
  'scenarios/src/kernel-reopen.test.ts': 'reopen rules after a close or SIGKILL, on a SQLite file',
  'scenarios/src/robustness/call-atomicity.test.ts': 'a child runtime SIGKILLed mid-call, on a SQLite file',
  'scenarios/src/hosts/tasks-takeover.test.ts': 'on PostgreSQL already (its own schemas); opens no in-memory runtime',
};

/**
 * Test files that fail on PostgreSQL because of a defect found there and not fixed yet (issue 15): out of the
 * `postgres` project until it is, each with the defect. Remove the line with the fix.
 */
const OPEN_POSTGRES_DEFECTS: Record<string, string> = {};

// Tests import workspace packages from source, so a change is tested without a rebuild.
// (CLI tests run the built binary; `npm test` builds first.)
// Two projects (issue 15): `sqlite`, the whole suite; `postgres`, every test file that opens a runtime on the
// in-memory store, again, with each such store on a fresh schema of LIBOS_TEST_PG_URL (its setup file redirects it).
export default defineConfig({
  resolve: {
    alias: {
      '@libos/sdk': src('./packages/sdk/src/index.ts'),
      '@libos/capabilities': src('./packages/capabilities/src/index.ts'),
      '@libos/object-memory': src('./packages/object-memory/src/index.ts'),
      '@libos/tasks': src('./packages/tasks/src/index.ts'),
      '@libos/session': src('./packages/session/src/index.ts'),
      '@libos/workspace': src('./packages/workspace/src/index.ts'),
      '@libos/checkpoints': src('./packages/checkpoints/src/index.ts'),
      '@libos/kernel': src('./packages/kernel/src/index.ts'),
      '@libos/server': src('./apps/server/src/index.ts'),
      '@libos/client': src('./packages/client/src/index.ts'),
      '@libos/mcp-client': src('./packages/mcp-client/src/index.ts'),
      '@libos/testing': src('./packages/testing/src/index.ts'),
    },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'scenarios/src/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: inMemoryRuntimeTestFiles(
            root,
            testFiles(root, [...srcFolders('packages'), ...srcFolders('apps'), ...srcFolders('examples'), 'scenarios/src']),
          ),
          exclude: [...Object.keys(SQLITE_ONLY), ...Object.keys(OPEN_POSTGRES_DEFECTS)],
          // A runtime opens in about 0.7 s here (some 150 DDL statements on the server) against 50 ms on SQLite, so a
          // test that opens many (CP-16's property test: 25) needs more than the 30 s a test has on SQLite. More forks
          // do not help: with 2 cores the server is the bottleneck (3 forks: 610 s, 1 fork: 646 s).
          testTimeout: 120_000,
          setupFiles: ['scenarios/src/support/postgres-project-setup.ts'],
        },
      },
    ],
  },
});
