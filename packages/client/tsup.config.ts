import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// The server's route types are inlined into the client's .d.ts/.d.cts: @libos/server is ESM-only, and a CommonJS
// consumer's types must not import it. They come from the server's built .d.ts, so the declaration build resolves
// @libos/server through node_modules, not through the source `paths` of tsconfig.base.json.
export default defineConfig({ ...libraryBuild, dts: { resolve: ['@libos/server'], compilerOptions: { paths: {} } } });
