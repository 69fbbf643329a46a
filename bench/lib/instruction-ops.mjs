// The child program of `instructions.mjs`: runs `<n>` ops of one kind on a fresh runtime and exits. Run under
// callgrind, the difference between two values of `<n>` is what the ops cost, without the start-up.
//
//   node lib/instruction-ops.mjs <call|append|read|step> <n> [ledgers: Objects an append or read goes to, default n]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callOk, createLedgers, openBenchRuntime, prepareStep, runStep, spawnChecked } from './libos.mjs';

/** A 1 KB entry, as `append_1kb_vs_insert` appends. */
const ENTRY_1KB = { text: 'x'.repeat(1013) };

const OPS = ['call', 'append', 'read', 'step'];

const [op, count, ledgerCount = count] = process.argv.slice(2);
const n = Number(count);
const ledgers = Number(ledgerCount);
if (!OPS.includes(op) || !Number.isInteger(n) || n < 0 || !Number.isInteger(ledgers) || ledgers < 0) {
  console.error(`usage: node lib/instruction-ops.mjs <${OPS.join('|')}> <n> [ledgers]`);
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'libos-instr-'));
const rt = await openBenchRuntime(join(dir, 'ops.db'));
try {
  // A step runs every runnable process, so it gets no caller of its own.
  const pid = op === 'step' ? null : await spawnChecked(rt, { objects: true });
  // Both runs create the same ledgers (`ledgers`, the larger op count), so creating them cancels out of the difference.
  const names = Array.from({ length: Math.max(n, ledgers) }, (_, i) => `ledger-${i}`);
  if (pid !== null && op !== 'call') await createLedgers(rt, pid, names, [ENTRY_1KB]);
  rt.flush();
  // A full collection here and after the ops: both runs enter the ops with the same heap, so a major GC that the
  // setup left pending does not land in one run's ops and not the other's (one costs ~1 M instructions an op).
  globalThis.gc?.();
  for (let i = 0; i < n; i++) {
    if (op === 'call') await callOk(rt, pid, 'get_current_time', {});
    else if (op === 'append') await callOk(rt, pid, 'append_memory_object', { name: names[i], entry: ENTRY_1KB });
    else if (op === 'read') await callOk(rt, pid, 'read_memory_object', { name: names[i] });
    else await runStep(rt, await prepareStep(rt));
    if (i % 40 === 39) rt.flush(); // the batch commit, as the timed figures share it
  }
  rt.flush();
  globalThis.gc?.();
} finally {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
}
