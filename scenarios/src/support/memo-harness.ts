// Store-memo scenarios on a real SQLite file store (K-9.16, K-9.28, K-9.29): runtimes with capabilities and Object
// Memory, closed after each test, and counters of the statements the kernel runs, counted on better-sqlite3's
// statements where the kernel runs them (a file store, so SQLite only).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime, type RuntimeConfig } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import Database from 'better-sqlite3';
import { afterEach } from 'vitest';

/** What `memoHarness` gives a test file. */
export interface MemoHarness {
  /** A runtime on a fresh store file, with capabilities and Object Memory (and `config`); closed after the test. */
  open(config?: RuntimeConfig): Promise<Runtime>;
  /**
   * Counts the runs of statements whose SQL matches `sql` on every connection opened from now on (until the test
   * ends), per key: `keyOf` of the run's arguments (default: one key, `all`).
   */
  countStatements(sql: RegExp, keyOf?: (args: readonly unknown[]) => string): Map<string, number>;
}

/**
 * Registers the cleanup of the current test file and returns its harness.
 *
 * @example
 * const h = memoHarness('libos-owner-memo-');
 * const lookups = h.countStatements(/^select "oid" from "om_objects" where "oid" = \?$/, (args) => String(args[0]));
 * const rt = await h.open();
 */
export function memoHarness(dirPrefix: string): MemoHarness {
  const runtimes: Runtime[] = [];
  const dirs: string[] = [];
  const restores: (() => void)[] = [];
  afterEach(async () => {
    for (const restore of restores.splice(0).reverse()) restore();
    for (const rt of runtimes.splice(0)) await rt.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    async open(config) {
      const dir = mkdtempSync(join(tmpdir(), dirPrefix));
      dirs.push(dir);
      const rt = await openRuntime({
        path: join(dir, 'store.db'),
        plugins: [capabilities(), objectMemory()],
        ...(config ? { config } : {}),
      });
      runtimes.push(rt);
      return rt;
    },
    countStatements(sql, keyOf = () => 'all') {
      const counts = new Map<string, number>();
      const proto = Database.prototype as unknown as { prepare(this: Database.Database, source: string): Database.Statement };
      const prepare = proto.prepare;
      proto.prepare = function (this: Database.Database, source: string) {
        const stmt = prepare.call(this, source);
        if (!sql.test(source)) return stmt;
        for (const method of ['all', 'get', 'iterate'] as const) {
          const run = (stmt[method] as (...args: unknown[]) => unknown).bind(stmt);
          (stmt as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
            const key = keyOf(args.flat());
            counts.set(key, (counts.get(key) ?? 0) + 1);
            return run(...args);
          };
        }
        return stmt;
      };
      restores.push(() => {
        proto.prepare = prepare;
      });
      return counts;
    },
  };
}

/** Calls `tool` as `pid` and returns its payload; throws with the error when the call failed. */
export async function callOk(rt: Runtime, pid: string, tool: string, args: Record<string, unknown>): Promise<{ oid: string }> {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
  return r.payload as { oid: string };
}
