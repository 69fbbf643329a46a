import { writeFileSync } from 'node:fs';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds, toolInputJsonSchema } from '@libos/sdk';
import { createApp } from '@libos/server';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerSurface, mcpSurface, restSurface, SURFACES, type App, type CallOn, type Surface, type Verdict } from './fuzz-surfaces.js';
import { FuzzTarget } from './fuzz-target.js';
import { hostileArguments, POLLUTION_MARKER } from './hostile-values.js';
import { toolArgumentsArbitrary } from './schema-arbitrary.js';

/**
 * Fuzz: schema-driven arguments (valid-shaped, from each tool's JSON Schema) mixed with hostile values, for every
 * tool of every loaded plugin, through the broker, REST and MCP. Every answer must be a well-formed result or an
 * error with a closed-table code that is not `internal`; no call may throw or hang.
 *
 * LIBOS_FUZZ_SEED picks the seed (printed), LIBOS_FUZZ_RUNS the number of calls (half through the broker, a quarter
 * each through REST and MCP), LIBOS_FUZZ_DUMP a file that receives every failure and an example message per code.
 */

function envInt(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name}: must be a non-negative integer (got ${JSON.stringify(v)})`);
  return n;
}

const SEED = envInt('LIBOS_FUZZ_SEED', 20_260_801);
const RUNS = envInt('LIBOS_FUZZ_RUNS', 5_400);
const SHARE: Readonly<Record<Surface, number>> = { broker: 0.5, rest: 0.25, mcp: 0.25 };
/**
 * Deepest hostile nesting per surface. The MCP SDK client serializes with `JSON.stringify`, which V8 stops at a few
 * thousand levels (a RangeError in the client, before anything is sent); the broker and REST take 10,000.
 */
const MAX_DEPTH: Readonly<Record<Surface, number>> = { broker: 10_000, rest: 10_000, mcp: 3_000 };
/** A call that has not answered by then hangs (generous: a loaded 2-core machine, megabyte arguments). */
const CALL_TIMEOUT_MS = 15_000;
/** Errors that mean a call stopped before its tool ran. */
const SHALLOW = new Set(['invalid_arguments', 'tool_not_in_process_table', 'process_not_tool_callable', 'interrupted_by_message']);
const TOKEN = 'libos-fuzz-token-0123456789abcdef';

interface Failure {
  readonly surface: Surface;
  readonly tool: string;
  readonly args: string;
  readonly problem: string;
}

/** What one surface answered. `codes` counts error codes and refusal reasons; `examples` keeps a message of each. */
interface Tally {
  calls: number;
  ms: number;
  ok: number;
  refused: number;
  internal: number;
  malformed: number;
  throws: number;
  hangs: number;
  readonly codes: Map<string, number>;
  readonly examples: Map<string, string>;
}

const newTally = (): Tally => ({
  calls: 0,
  ms: 0,
  ok: 0,
  refused: 0,
  internal: 0,
  malformed: 0,
  throws: 0,
  hangs: 0,
  codes: new Map(),
  examples: new Map(),
});

/** Arguments as a short string, whatever they are (deep, huge, not JSON). */
function preview(v: unknown): string {
  let s: string;
  try {
    const short = (_k: string, x: unknown) =>
      typeof x === 'string' && x.length > 80 ? `<string of ${x.length}: ${JSON.stringify(x.slice(0, 20))}…>` : x;
    s = JSON.stringify(v, short) ?? String(v);
  } catch (err) {
    s = `<unprintable: ${(err as Error).message}>`;
  }
  return s.length > 400 ? `${s.slice(0, 400)}… (${s.length} chars)` : s;
}

const HANG = Symbol('hang');
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | typeof HANG> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<typeof HANG>((resolve) => {
    timer = setTimeout(() => resolve(HANG), ms);
  });
  p.catch(() => undefined); // a call that already hung may fail later: it was counted
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}

let rt: Runtime;
let app: App;
/** Internal errors the server reported (each also answered 500). */
const serverErrors: string[] = [];

beforeAll(async () => {
  const plugins = [capabilities(), objectMemory(), tasks(), session()];
  rt = await openRuntime({ path: ':memory:', plugins, config: { ids: sequentialIds() } });
  const onError = (err: unknown) => {
    serverErrors.push(err instanceof Error ? `${err.message}\n${(err.cause as Error | undefined)?.stack ?? err.stack}` : String(err));
  };
  app = createApp({ runtime: rt, token: TOKEN, onError });
});
afterAll(async () => {
  await rt?.close();
});

describe('robustness: fuzz', () => {
  const title =
    'every tool of every plugin, schema-driven and hostile arguments, through broker, REST and MCP: no internal_error, throw or hang';
  it(`${title} (seed ${SEED}, ${RUNS} calls)`, async () => {
    const target = new FuzzTarget(rt);
    const tools = target.tools();
    const mcp = mcpSurface(app, TOKEN);
    const surfaces: Record<Surface, CallOn> = { broker: brokerSurface(rt), rest: restSurface(app, TOKEN), mcp };
    const tallies = Object.fromEntries(SURFACES.map((s) => [s, newTally()])) as Record<Surface, Tally>;
    const failures: Failure[] = [];
    const reached = new Set<string>();
    const succeeded = new Set<string>();

    /** A tool, its arguments (valid-shaped 3 times in 5, else hostile), and whether the caller confirms. */
    const callArbitrary = (surface: Surface) =>
      fc.oneof(
        ...tools.map((tool) => {
          const def = rt.toolDefinition(tool)!;
          const keys = Object.keys((toolInputJsonSchema(def).properties as object | undefined) ?? {});
          const valid = toolArgumentsArbitrary(def, { known: target.pool.known });
          const hostile = hostileArguments(valid, keys, { jsOnly: surface === 'broker', maxDepth: MAX_DEPTH[surface] });
          const args = fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: hostile });
          const confirmed = fc.oneof(
            { weight: 4, arbitrary: fc.constant(true) },
            { weight: 1, arbitrary: fc.constant(false) },
            { weight: 1, arbitrary: fc.constant(undefined) },
          );
          return fc.record({ tool: fc.constant(tool), args, confirmed });
        }),
      );

    const count = (t: Tally, key: string, example: string) => {
      t.codes.set(key, (t.codes.get(key) ?? 0) + 1);
      if (!t.examples.has(key)) t.examples.set(key, example);
    };

    const oneCall = async (surface: Surface, tool: string, args: unknown, confirmed: boolean | undefined) => {
      const t = tallies[surface];
      const pid = await target.callerFor(tool);
      t.calls += 1;
      const fail = (problem: string) => failures.push({ surface, tool, args: preview(args), problem });
      let v: Verdict | typeof HANG;
      try {
        v = await withTimeout(surfaces[surface](pid, tool, args, confirmed), CALL_TIMEOUT_MS);
      } catch (err) {
        t.throws += 1;
        const cause = (err as Error)?.cause;
        fail(`threw: ${(err as Error)?.stack ?? String(err)}${cause ? `\ncause: ${String(cause)}` : ''}`);
        return;
      }
      if (v === HANG) {
        t.hangs += 1;
        fail(`no answer within ${CALL_TIMEOUT_MS} ms`);
        return;
      }
      switch (v.kind) {
        case 'ok':
          t.ok += 1;
          reached.add(tool);
          succeeded.add(tool);
          break;
        case 'error':
          count(t, v.code, `${tool}: ${v.message.slice(0, 300)}`);
          if (!SHALLOW.has(v.code)) reached.add(tool);
          break;
        case 'refused':
          t.refused += 1;
          count(t, `refused:${v.reason}`, tool);
          break;
        case 'internal':
          t.internal += 1;
          fail(`${v.code}: ${v.message}`);
          break;
        case 'malformed':
          t.malformed += 1;
          fail(`malformed: ${v.problem}`);
          break;
      }
      await target.after(v);
    };

    const started = Date.now();
    try {
      for (const [i, surface] of SURFACES.entries()) {
        const numRuns = Math.round(RUNS * SHARE[surface]);
        if (numRuns === 0) continue;
        const t0 = Date.now();
        // The property never fails on a bad answer (it is tallied, so every failure of the run is reported); it
        // fails only when the harness itself breaks.
        await fc.assert(
          fc.asyncProperty(callArbitrary(surface), async ({ tool, args, confirmed }) => {
            await oneCall(surface, tool, args, confirmed);
          }),
          { seed: SEED + i, numRuns, endOnFailure: true },
        );
        tallies[surface].ms = Date.now() - t0;
      }
    } finally {
      await mcp.close();
    }

    const sum = (k: 'calls' | 'internal' | 'malformed' | 'throws' | 'hangs') => SURFACES.reduce((n, s) => n + tallies[s][k], 0);
    console.log(`fuzz calls ${sum('calls')}, internal_error ${sum('internal')}, throws ${sum('throws')}, hangs ${sum('hangs')}`);
    for (const s of SURFACES) {
      const t = tallies[s];
      const codes = [...t.codes]
        .sort((a, b) => b[1] - a[1])
        .map(([c, n]) => `${c} ${n}`)
        .join(', ');
      console.log(`  ${s}: ${t.calls} calls in ${(t.ms / 1000).toFixed(1)} s, ok ${t.ok}, refused ${t.refused}; ${codes}`);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`  seed ${SEED} (LIBOS_FUZZ_SEED), ${RUNS} runs (LIBOS_FUZZ_RUNS), ${seconds} s, ${target.respawns} fuzz processes`);
    const never = tools.filter((t) => !succeeded.has(t)).join(', ') || '(none)';
    console.log(`  ${tools.length} tools: ${reached.size} reached their run, ${succeeded.size} succeeded; never succeeded: ${never}`);
    if (process.env.LIBOS_FUZZ_DUMP) {
      const examples = Object.fromEntries(SURFACES.map((s) => [s, Object.fromEntries(tallies[s].examples)]));
      writeFileSync(process.env.LIBOS_FUZZ_DUMP, JSON.stringify({ seed: SEED, runs: RUNS, failures, serverErrors, examples }, null, 1));
    }

    expect(failures.slice(0, 20)).toEqual([]);
    expect(sum('internal') + sum('malformed') + sum('throws') + sum('hangs')).toBe(0);
    expect(serverErrors.slice(0, 5)).toEqual([]);
    expect(sum('calls')).toBe(SURFACES.reduce((n, s) => n + Math.round(RUNS * SHARE[s]), 0));
    // Schema-driven arguments get past parsing into every tool (when the run is long enough to draw each).
    if (RUNS >= 20 * tools.length) expect(tools.filter((t) => !reached.has(t))).toEqual([]);
    // No hostile key reached a prototype.
    expect(Object.prototype).not.toHaveProperty(POLLUTION_MARKER);
    expect(Object.keys(Object.prototype)).toEqual([]);
  }, 900_000);
});
