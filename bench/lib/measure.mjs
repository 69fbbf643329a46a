// Side-by-side measurement: the sides of a figure run in interleaved blocks in this process, and each figure is a
// ratio of their medians. Each round starts with a different side, so drift and load spikes hit every side alike.

/** The median of a non-empty list of numbers. */
export function median(values) {
  if (values.length === 0) throw new Error('median: no values');
  const s = [...values].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const clocks = {
  /** Elapsed wall-clock time: what a user waits. */
  wall: () => performance.now(),
  /** CPU time of this process (user + system): steadier than wall time on a machine other jobs load. */
  cpu: () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  },
};
let clock = clocks.wall;

/** Chooses what a millisecond means for every measurement after this call: `wall` (default) or `cpu`. */
export function useClock(kind) {
  if (!Object.hasOwn(clocks, kind)) throw new Error(`BENCH_CLOCK: wall or cpu (got ${JSON.stringify(kind)})`);
  clock = clocks[kind];
}

/** The current reading of the chosen clock, in ms. */
export const now = () => clock();

/** Milliseconds per op of `n` awaited calls of `op(i)`. */
export async function msPerOp(n, op) {
  const t0 = now();
  for (let i = 0; i < n; i++) await op(i);
  return (now() - t0) / n;
}

/**
 * Milliseconds per op of `n` calls of `op(i, prepared)`, where `prepare(i)` runs before each op and is not timed
 * (e.g. spawning the process a step then runs).
 */
export async function msPerOpWithSetup(n, prepare, op) {
  let total = 0;
  for (let i = 0; i < n; i++) {
    const prepared = await prepare(i);
    const t0 = now();
    await op(i, prepared);
    total += now() - t0;
  }
  return total / n;
}

/**
 * Runs every side (`sides`: name -> async (block) => one number for that block: ms per op, bytes per op, ...) in
 * `blocks` rounds. Before them, untimed warm-up rounds (block -1): at least one (none when `warmup` is false), and more
 * until `warmMs` milliseconds of warm-up have passed, so V8 has compiled the code each side runs before anything
 * counts (a runtime is a long-running process: its steady state is what a figure compares). Each round runs every
 * side once and starts one side later than the round before, so drift and load spikes hit all sides alike.
 * Returns each side's median, every block's value, the first warm-up round's values (`cold`: what a side cost before
 * it was warm) and how many warm-up rounds ran.
 *
 * @example
 * const { medians } = await interleave({ blocks: 7, warmMs: 3000 }, { a: () => msPerOp(40, call), b: () => msPerOp(2000, insert) });
 */
export async function interleave({ blocks, warmup = true, warmMs = 0 }, sides) {
  if (!(blocks >= 5)) throw new Error(`interleave: at least 5 blocks (got ${blocks})`);
  const names = Object.keys(sides);
  const cold = {};
  let warmRounds = 0;
  if (warmup) {
    const until = performance.now() + warmMs;
    do {
      for (const name of names) {
        const v = await sides[name](-1);
        if (warmRounds === 0) cold[name] = v;
      }
      warmRounds++;
    } while (performance.now() < until);
  }
  const values = Object.fromEntries(names.map((n) => [n, []]));
  for (let k = 0; k < blocks; k++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(k + j) % names.length];
      values[name].push(await sides[name](k));
    }
  }
  const medians = Object.fromEntries(names.map((n) => [n, median(values[n])]));
  return { medians, values, cold, warmRounds };
}

/**
 * `ctx` with one untimed warm-up round instead of `ctx.warmMs`: for figures whose sides run the same code (at two sizes)
 * or count bytes, where a longer warm-up would only grow or copy their stores.
 */
export const oneWarmRound = (ctx) => ({ ...ctx, warmMs: 0 });

/** Two sides side by side: `ratio` is median(a) / median(b). */
export async function sideBySide(opts, a, b) {
  const { medians, values, cold, warmRounds } = await interleave(opts, { a, b });
  const coldRatio = cold.a !== undefined ? cold.a / cold.b : undefined;
  return { a: medians.a, b: medians.b, ratio: medians.a / medians.b, va: values.a, vb: values.b, coldRatio, warmRounds };
}

/** A ratio printed with three significant digits at most (41.7, 4.17, 1.05; 280 above 100). */
export function formatRatio(v) {
  if (!Number.isFinite(v)) return String(v);
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

/** The one stdout line of a figure: `RATIO <name> <value> goal <target>`. */
export function ratioLine(name, value, goal) {
  return `RATIO ${name} ${formatRatio(value)} goal ${goal}`;
}
