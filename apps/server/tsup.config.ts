import { cpSync, existsSync } from 'node:fs';
import { defineConfig } from 'tsup';

// The web console (apps/console, built first: see turbo.json) is bundled into dist/console, served at GET /.
const consoleDist = new URL('../console/dist/', import.meta.url);

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  onSuccess: async () => {
    if (!existsSync(new URL('index.html', consoleDist)))
      throw new Error('apps/console/dist is missing: build @libos/console first (turbo does)');
    cpSync(consoleDist, new URL('./dist/console/', import.meta.url), { recursive: true });
  },
});
