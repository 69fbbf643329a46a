import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests import workspace packages from source, so a change is tested without a rebuild.
// (CLI tests run the built binary; `npm test` builds first.)
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
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts', 'scenarios/src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
