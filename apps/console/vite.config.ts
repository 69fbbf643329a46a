import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The console is bundled into dist/ (and from there into the server's dist) at build time: no CDN, no runtime fetch of
// anything but this server's API. @libos/client is compiled from source so the console builds before the server.
export default defineConfig({
  base: './',
  resolve: { alias: { '@libos/client': fileURLToPath(new URL('../../packages/client/src/index.ts', import.meta.url)) } },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  logLevel: 'warn',
});
