import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// The server's route types are inlined into the client's .d.ts/.d.cts: @libos/server is ESM-only, and a CommonJS
// consumer's types must not import it.
export default defineConfig({ ...libraryBuild, dts: { resolve: ['@libos/server'] } });
