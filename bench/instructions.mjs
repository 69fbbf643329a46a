// `node bench/instructions.mjs [call|append|read|step ...]` (after `npm run build`): machine instructions per op,
// counted by valgrind's callgrind, for comparing two builds on a machine whose wall clock is too noisy to tell a few
// percent apart. Not a figure of `npm run bench`: instructions are not time (a syscall or a cache miss counts little),
// but they barely depend on the machine's load, so a change that does less work shows here. Each op kind runs twice
// under `node --jitless` (compiled code would differ between runs), `--expose-gc` (the child collects before and
// after its ops, so both runs enter them with the same heap) and `--no-experimental-fetch` (touching `fetch`
// needs WebAssembly, which --jitless turns off) with `BENCH_INSTR_N` ops (defaults in SIZES); the difference is
// divided by the difference of ops, so start-up and the runtime's open cancel out. Prints one line per op kind:
// `INSTR <op> <instructions per op>`. See bench/README.md.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const OPS = ['call', 'append', 'read', 'step'];
const SIZES = { call: [40, 440], append: [20, 120], read: [20, 120], step: [5, 25] };
const child = fileURLToPath(new URL('./lib/instruction-ops.mjs', import.meta.url));

/** Instructions callgrind counts for one run of `n` ops (the `Collected` line of its summary). */
function instructions(op, n, ledgers) {
  const args = [
    '--tool=callgrind',
    '--callgrind-out-file=/dev/null',
    process.execPath,
    '--jitless',
    '--expose-gc',
    '--no-experimental-fetch',
    child,
    op,
    String(n),
    String(ledgers),
  ];
  const r = spawnSync('valgrind', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  const collected = /Collected\s*:\s*(\d+)/.exec(r.stderr);
  if (r.status !== 0 || !collected) throw new Error(`valgrind ${op} ${n} exited ${r.status}:\n${r.stderr.slice(-2000)}`);
  return Number(collected[1]);
}

const asked = process.argv.slice(2);
const ops = asked.length > 0 ? asked : OPS;
for (const op of ops) if (!OPS.includes(op)) throw new Error(`unknown op ${JSON.stringify(op)} (ops: ${OPS.join(', ')})`);
if (spawnSync('valgrind', ['--version']).error) {
  console.log('INSTR skipped (no valgrind: apt-get install -y valgrind)');
  process.exit(0);
}
const sizes = process.env.BENCH_INSTR_N?.split(',').map(Number);
if (sizes && (sizes.length !== 2 || !sizes.every((s) => Number.isInteger(s) && s >= 0) || sizes[0] >= sizes[1])) {
  throw new Error(`BENCH_INSTR_N: two op counts, the smaller first, e.g. 20,120 (got ${process.env.BENCH_INSTR_N})`);
}
for (const op of ops) {
  const [small, large] = sizes ?? SIZES[op];
  const per = (instructions(op, large, large) - instructions(op, small, large)) / (large - small);
  console.log(`INSTR ${op} ${(per / 1e6).toFixed(2)}M`);
  process.stderr.write(`#   ${op}: instructions of ${large} ops minus those of ${small}, per op, node --jitless\n`);
}
