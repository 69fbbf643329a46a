import type { Options } from 'tsup';

/** Build options every library package shares: ESM + CJS + d.ts for Node 20 (apps set their own). */
export const libraryBuild: Options = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  shims: true,
  sourcemap: true,
  target: 'node20',
};
