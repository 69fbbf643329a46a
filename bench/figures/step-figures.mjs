// Agent-step figures: our step against the hand-written durable loop and against LangGraph.js (one interleaved
// run of the three), the WAL bytes our step writes against the hand loop's, and a turn of a process that observed
// 1,000 Objects against one that observed none.
import { join } from 'node:path';
import { interleave, msPerOp, msPerOpWithSetup, oneWarmRound, sideBySide } from '../lib/measure.mjs';
import { ScriptedProvider } from '@libos/kernel';
import { flushShare, keepWal, openBenchRuntime, prepareStep, runStep, spawnChecked } from '../lib/libos.mjs';
import { langGraphAgent } from '../lib/langgraph-step.mjs';
import { bytesWritten, handLoop } from '../lib/sqlite-floor.mjs';

export async function stepFigures(ctx) {
  const rt = await openBenchRuntime(join(ctx.dir, 'steps.db'));
  const hand = handLoop(join(ctx.dir, 'hand.db'));
  const graph = langGraphAgent(join(ctx.dir, 'langgraph.db'));
  try {
    const nStep = ctx.n(8);
    const nHand = ctx.n(500);
    const { medians, cold, warmRounds } = await interleave(ctx, {
      step: async () => {
        rt.flush();
        const ms = await msPerOpWithSetup(
          nStep,
          () => prepareStep(rt),
          (_, s) => runStep(rt, s),
        );
        return ms + flushShare(rt, nStep);
      },
      hand: () => msPerOp(nHand, hand.op),
      langgraph: () => msPerOp(nStep, () => graph.step()),
    });
    const ms = (v) => `${(v * 1000).toFixed(0)} µs`;
    const pair = (a, b) => ({ a: medians[a], b: medians[b], ratio: medians[a] / medians[b], coldRatio: cold[a] / cold[b], warmRounds });
    const stepDetail = `rt.run of one step (${ms(medians.step)}) vs three 1 KB inserts in one transaction (${ms(medians.hand)})`;
    ctx.report('step_vs_hand_loop', pair('step', 'hand'), '<=15', `${stepDetail}; ${nStep} / ${nHand} a block`);
    const graphDetail = `LangGraph.js invoke, SqliteSaver (${ms(medians.langgraph)}) vs our step (${ms(medians.step)}); ${nStep} a block`;
    ctx.report('langgraph_vs_step', pair('langgraph', 'step'), '>=8', graphDetail);
  } finally {
    graph.close();
    hand.close();
    await rt.close();
  }
  await walFigure(ctx);
  await sourcesFigure(ctx);
}

/** Objects the observing side's process has read before its timed turns. */
const OBSERVED = 1_000;

/**
 * A process that has observed `observed` Objects (created host-side for `holder`, so its exit releases none of them,
 * then marked read through its flow, as a read does), runnable, with `turns` scripted `get_current_time` turns and
 * then `process_exit`.
 */
async function observingProcess(rt, holder, observed, turns) {
  const pid = await spawnChecked(rt, { objects: true });
  await rt.transaction(async (scope) => {
    const objects = scope.service('objects');
    const oids = [];
    for (let i = 0; i < observed; i++) {
      const input = { type: 'observation', name: `seen-${pid}-${i}`, payload: { i }, attachToView: false };
      oids.push((await objects.createForProcess(holder, input)).oid);
    }
    if (oids.length > 0) await rt.authority.flow(scope, pid).taint({}, oids);
  });
  const script = [...Array.from({ length: turns }, () => [{ tool: 'get_current_time', args: {} }]), [{ tool: 'process_exit', args: {} }]];
  return { pid, provider: new ScriptedProvider({ processes: { [pid]: script } }) };
}

/**
 * ms per quantum of a process that has observed 1,000 Objects vs one that observed none: each turn publishes its
 * result as an Object whose provenance names what the process observed (OM-77.2, OM-77.3).
 */
async function sourcesFigure(ctx) {
  const rt = await openBenchRuntime(join(ctx.dir, 'sources.db'));
  try {
    const turns = ctx.n(20);
    const holder = await spawnChecked(rt);
    await rt.signal(holder, 'pause'); // holds the observed Objects; never scheduled
    const perQuantum = (observed) => async () => {
      const { pid, provider } = await observingProcess(rt, holder, observed, turns);
      rt.flush();
      const t0 = performance.now();
      const r = await rt.run({ provider });
      if (r.quanta !== turns + 1 || r.results.some((q) => q.pid !== pid || q.results.some((x) => !x.ok))) {
        throw new Error(`observing process ${pid}: expected ${turns + 1} clean quanta of its own, got ${r.quanta}`);
      }
      return (performance.now() - t0) / r.quanta + flushShare(rt, r.quanta);
    };
    const r = await sideBySide(oneWarmRound(ctx), perQuantum(OBSERVED), perQuantum(0));
    const detail = `ms per quantum (${turns} get_current_time turns and an exit a block) after observing ${OBSERVED} Objects vs none`;
    ctx.report('turn_1000_sources_vs_0', r, '<=1.3', detail);
  } finally {
    await rt.close();
  }
}

/**
 * Bytes written per step (the rt.run alone, as timed above, plus its share of the batch commit): every byte the
 * process hands to write() while it runs (`bytesWritten`: WAL frames and the redo log alike), against the hand loop's.
 * Auto-checkpoints are off on both stores, so no step pays for copying another's pages into the database file.
 */
async function walFigure(ctx) {
  const path = join(ctx.dir, 'wal-steps.db');
  const rt = await openBenchRuntime(path);
  const hand = handLoop(join(ctx.dir, 'wal-hand.db'), { autocheckpoint: false });
  try {
    await keepWal(rt);
    const nStep = ctx.n(40);
    const nHand = ctx.n(50);
    const stepBytes = async () => {
      rt.flush();
      let bytes = 0;
      for (let i = 0; i < nStep; i++) {
        const prepared = await prepareStep(rt);
        const before = bytesWritten();
        await runStep(rt, prepared);
        bytes += bytesWritten() - before;
      }
      const before = bytesWritten();
      rt.flush();
      return (bytes + bytesWritten() - before) / nStep;
    };
    const handBytes = async () => {
      const before = bytesWritten();
      for (let i = 0; i < nHand; i++) hand.op();
      return (bytesWritten() - before) / nHand;
    };
    // Bytes, not time: nothing to wait for V8 to compile, so one untimed round as before (more rounds would only grow
    // the store, and a step on a bigger store dirties more index pages: 3.3 on the first block, 4.0 after 360 steps).
    const r = await sideBySide(oneWarmRound(ctx), stepBytes, handBytes);
    ctx.report(
      'wal_bytes_step_vs_hand_loop',
      r,
      '<=4',
      `bytes written per step: ours ${Math.round(r.a)} B vs hand loop ${Math.round(r.b)} B`,
    );
  } finally {
    hand.close();
    await rt.close();
  }
}
