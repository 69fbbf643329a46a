// `npm run bench`: every figure in this one process, each a ratio of sides measured side by side in interleaved
// blocks (medians). stdout gets exactly one line per figure, `RATIO <name> <value> goal <target>`; details go to
// stderr. Exits 0 even when a goal is missed; non-zero only when a benchmark crashed. See bench/README.md.
//
// Env: BENCH_BLOCKS (blocks per figure, default 7, at least 5), BENCH_N (scales the ops per block, default 1),
// BENCH_QUICK=1 (5 blocks, a quarter of the ops), BENCH_ONLY=calls,steps,scale,pg,hosts (figure groups),
// BENCH_CLOCK=wall|cpu (what a millisecond is; default wall), BENCH_WARM_MS (untimed warm-up per figure, default 3000;
// quick: 1000), LIBOS_BENCH_PG_URL (the PostgreSQL server of `pg` and `hosts`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callFigures } from './figures/call-figures.mjs';
import { hostFigures } from './figures/host-figures.mjs';
import { pgFigures } from './figures/pg-figures.mjs';
import { scaleFigures } from './figures/scale-figures.mjs';
import { stepFigures } from './figures/step-figures.mjs';
import { formatRatio, ratioLine, useClock } from './lib/measure.mjs';

const GROUPS = { calls: callFigures, steps: stepFigures, scale: scaleFigures, pg: pgFigures, hosts: hostFigures };

function config(env) {
  const quick = env.BENCH_QUICK === '1';
  const blocks = Number(env.BENCH_BLOCKS ?? (quick ? 5 : 7));
  const scale = Number(env.BENCH_N ?? 1) * (quick ? 0.25 : 1);
  if (!Number.isInteger(blocks) || blocks < 5) throw new Error(`BENCH_BLOCKS: an integer >= 5 (got ${env.BENCH_BLOCKS})`);
  if (!(scale > 0)) throw new Error(`BENCH_N: a positive number (got ${env.BENCH_N})`);
  const only = (env.BENCH_ONLY ?? Object.keys(GROUPS).join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const g of only) {
    if (!(g in GROUPS)) throw new Error(`BENCH_ONLY: unknown group ${JSON.stringify(g)} (groups: ${Object.keys(GROUPS).join(', ')})`);
  }
  const warmMs = Number(env.BENCH_WARM_MS ?? (quick ? 1000 : 3000));
  if (!(warmMs >= 0)) throw new Error(`BENCH_WARM_MS: a number of milliseconds >= 0 (got ${env.BENCH_WARM_MS})`);
  const clock = env.BENCH_CLOCK ?? 'wall';
  useClock(clock);
  return { blocks, scale, only, clock, warmMs };
}

const cfg = config(process.env);
const dir = mkdtempSync(join(tmpdir(), 'libos-bench-'));
const started = performance.now();
const ctx = {
  dir,
  blocks: cfg.blocks,
  /** Untimed warm-up before a figure's timed rounds (`interleave`); some figures take one round (`oneWarmRound`). */
  warmMs: cfg.warmMs,
  /** Ops per block: `base` scaled by BENCH_N / quick mode, at least 1. */
  n: (base) => Math.max(1, Math.round(base * cfg.scale)),
  note: (text) => process.stderr.write(`# ${text}\n`),
  report(name, r, goal, detail) {
    process.stdout.write(`${ratioLine(name, r.ratio, goal)}\n`);
    const cold = r.coldRatio === undefined ? '' : `; cold ${formatRatio(r.coldRatio)} (first of ${r.warmRounds} warm-up rounds)`;
    process.stderr.write(
      `#   ${name}: ${detail}; medians ${r.a.toPrecision(4)} / ${r.b.toPrecision(4)} over ${cfg.blocks} blocks${cold}\n`,
    );
  },
};

const setup = `${cfg.blocks} blocks a figure after ${cfg.warmMs} ms of warm-up, ops x${cfg.scale}, ${cfg.clock} clock`;
ctx.note(`libOS bench: ${setup}, groups ${cfg.only}; stores in ${dir}`);
let crashed = 0;
try {
  for (const group of cfg.only) {
    try {
      await GROUPS[group](ctx);
    } catch (err) {
      crashed++;
      process.stderr.write(`# bench group ${group} crashed: ${err?.stack ?? err}\n`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
ctx.note(`done in ${((performance.now() - started) / 1000).toFixed(0)} s${crashed ? `; ${crashed} group(s) crashed` : ''}`);
process.exit(crashed === 0 ? 0 : 1);
