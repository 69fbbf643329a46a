// Which test files open a runtime on the in-memory store, for the `postgres` vitest project (vitest.config.ts): a
// file is in when it, or a test helper it imports (its own relative imports under a test folder, or `@libos/testing`),
// calls `openRuntime(` or `openTestRuntime(` and names the `':memory:'` store. Read from source, so a new test file
// that opens such a runtime joins the PostgreSQL run without being listed anywhere.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Helper files a test may reach: test folders only, never the code under test (which names `openRuntime` itself). */
const TEST_SUPPORT = /(?:\/internal\/testing\/|\/scenarios\/src\/|\/packages\/testing\/src\/|\.test\.ts$)/;
const IMPORT = /(?:from|import)\s*\(?\s*'([^']+)'/g;

function testFilesUnder(dir: string, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) testFilesUnder(p, out);
    else if (e.name.endsWith('.test.ts')) out.push(p);
  }
}

/** Every `*.test.ts` under `roots` (folders such as `packages/kernel/src`), relative to `root`, sorted. */
export function testFiles(root: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of roots) testFilesUnder(resolve(root, r), out);
  return out.map((p) => relative(root, p)).sort();
}

/** The test files (relative to `root`) that open a runtime on `':memory:'`, by the rule above. */
export function inMemoryRuntimeTestFiles(root: string, files: readonly string[]): string[] {
  const testing = resolve(root, 'packages/testing/src/index.ts');
  const opens = (path: string, seen: Set<string>): { call: boolean; memory: boolean } => {
    if (seen.has(path) || !existsSync(path)) return { call: false, memory: false };
    seen.add(path);
    const text = readFileSync(path, 'utf8');
    let call = /\bopen(?:Test)?Runtime\(/.test(text);
    let memory = text.includes("':memory:'");
    for (const [, spec] of text.matchAll(IMPORT)) {
      const target =
        spec === '@libos/testing' ? testing : spec?.startsWith('.') ? resolve(dirname(path), spec).replace(/\.js$/, '.ts') : null;
      if (!target || !TEST_SUPPORT.test(target)) continue;
      const r = opens(target, seen);
      call ||= r.call;
      memory ||= r.memory;
    }
    return { call, memory };
  };
  return files.filter((f) => {
    const r = opens(resolve(root, f), new Set());
    return r.call && r.memory;
  });
}
