// Agent-step figures: our step against the hand-written durable loop and against LangGraph.js (one interleaved
// run of the three), then the WAL bytes our step writes against the hand loop's.
import { join } from 'node:path';
import { interleave, msPerOp, msPerOpWithSetup, oneWarmRound, sideBySide } from '../lib/measure.mjs';
import { flushShare, keepWal, openBenchRuntime, prepareStep, runStep } from '../lib/libos.mjs';
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
