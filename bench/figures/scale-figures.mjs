// Scaling figures on stores with history (see lib/history-store.mjs): the cost of a scheduler quantum with 10,000
// processes in the store vs 10, and openRuntime on a store with 100k history rows vs 10k.
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { msPerOpWithSetup, now, oneWarmRound, sideBySide } from '../lib/measure.mjs';
import { flushShare, openBenchRuntime, prepareStep, runStep } from '../lib/libos.mjs';
import { buildTemplate, cloneTemplate, copyStore, historyRows } from '../lib/history-store.mjs';

/** Processes in the template (each one agent step, exited); also the small store of the quantum figure. */
const TEMPLATE_PROCESSES = 10;

const secondsSince = (t0) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
const mb = (path) => `${(statSync(path).size / 1e6).toFixed(0)} MB`;

export async function scaleFigures(ctx) {
  const t0 = performance.now();
  const template = await buildTemplate(join(ctx.dir, 'template.db'), TEMPLATE_PROCESSES);
  ctx.note(`template: ${template.processes} processes, ${template.rows} rows in processes+events+audit_records, in ${secondsSince(t0)}`);
  await quantumFigure(ctx, template);
  await reopenFigure(ctx, template);
}

/**
 * Cost per quantum: one agent step (2 quanta) on a store of 10 processes vs 10,000. The small store is a fresh copy
 * of the template each block (so it stays at 10 plus that block's steps); the big one is reopened each block.
 */
async function quantumFigure(ctx, template) {
  const t0 = performance.now();
  const big = cloneTemplate(template, join(ctx.dir, 'processes-10k.db'), 10_000 / TEMPLATE_PROCESSES - 1);
  ctx.note(`quantum_10k_vs_10: cloned a store of 10,000 processes, ${historyRows(big)} history rows (${mb(big)}) in ${secondsSince(t0)}`);
  const smallPath = join(ctx.dir, 'processes-10.db');
  // 12 steps a block: a quantum costs ~10 ms once the hot queries are indexed, and 3 steps (~60 ms of CPU) let
  // one load spike on a busy machine move a block's value by half.
  const nStep = ctx.n(12);
  const perQuantum = (path, copy) => async () => {
    const rt = await openBenchRuntime(copy ? copyStore(template.path, path) : path);
    try {
      await runStep(rt, await prepareStep(rt));
      rt.flush();
      const ms = await msPerOpWithSetup(
        nStep,
        () => prepareStep(rt),
        (_, s) => runStep(rt, s),
      );
      return (ms + flushShare(rt, nStep)) / 2;
    } finally {
      await rt.close();
    }
  };
  const r = await sideBySide(oneWarmRound(ctx), perQuantum(big, false), perQuantum(smallPath, true));
  const detail = `ms per quantum (a step is 2 quanta of rt.run; ${nStep} steps a block) with 10,000 exited processes vs 10`;
  ctx.report('quantum_10k_vs_10', r, '<=1.2', detail);
  rmSync(big, { force: true });
}

/** openRuntime on a fresh copy of a store with ~100k vs ~10k history rows, as their last writer left them. */
async function reopenFigure(ctx, template) {
  const t0 = performance.now();
  const copiesFor = (rows) => Math.ceil(rows / template.rows) - 1;
  const r100k = cloneTemplate(template, join(ctx.dir, 'history-100k.db'), copiesFor(100_000));
  const r10k = cloneTemplate(template, join(ctx.dir, 'history-10k.db'), copiesFor(10_000));
  const rows = { big: historyRows(r100k), small: historyRows(r10k) };
  ctx.note(`reopen_100k_vs_10k: cloned stores of ${rows.big} (${mb(r100k)}) and ${rows.small} (${mb(r10k)}) rows in ${secondsSince(t0)}`);
  const open = (from, to) => async () => {
    copyStore(from, to);
    const t = now();
    const rt = await openBenchRuntime(to);
    const ms = now() - t;
    await rt.close();
    return ms;
  };
  const r = await sideBySide(oneWarmRound(ctx), open(r100k, join(ctx.dir, 'reopen-100k.db')), open(r10k, join(ctx.dir, 'reopen-10k.db')));
  ctx.report('reopen_100k_vs_10k', r, '<=2', `openRuntime on a fresh copy of a store with ${rows.big} vs ${rows.small} history rows`);
}
