// Agent-step figures: our step against the hand-written durable loop and against LangGraph.js (one interleaved
// run of the three), then the WAL bytes our step writes against the hand loop's.
import { join } from 'node:path';
import { interleave, msPerOp, msPerOpWithSetup, sideBySide } from '../lib/measure.mjs';
import { keepWal, openBenchRuntime, prepareStep, runStep } from '../lib/libos.mjs';
import { langGraphAgent } from '../lib/langgraph-step.mjs';
import { handLoop, walBytes } from '../lib/sqlite-floor.mjs';

export async function stepFigures(ctx) {
  const rt = await openBenchRuntime(join(ctx.dir, 'steps.db'));
  const hand = handLoop(join(ctx.dir, 'hand.db'));
  const graph = langGraphAgent(join(ctx.dir, 'langgraph.db'));
  try {
    const nStep = ctx.n(8);
    const nHand = ctx.n(500);
    const { medians } = await interleave(ctx, {
      step: () =>
        msPerOpWithSetup(
          nStep,
          () => prepareStep(rt),
          (_, s) => runStep(rt, s),
        ),
      hand: () => msPerOp(nHand, hand.op),
      langgraph: () => msPerOp(nStep, () => graph.step()),
    });
    const ms = (v) => `${(v * 1000).toFixed(0)} µs`;
    const pair = (a, b) => ({ a: medians[a], b: medians[b], ratio: medians[a] / medians[b] });
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

/** WAL bytes per step (the rt.run alone, as timed above), with auto-checkpoints off so each WAL only grows. */
async function walFigure(ctx) {
  const path = join(ctx.dir, 'wal-steps.db');
  const rt = await openBenchRuntime(path);
  const handPath = join(ctx.dir, 'wal-hand.db');
  const hand = handLoop(handPath, { autocheckpoint: false });
  try {
    await keepWal(rt);
    const nStep = ctx.n(4);
    const nHand = ctx.n(50);
    const stepBytes = async () => {
      let bytes = 0;
      for (let i = 0; i < nStep; i++) {
        const prepared = await prepareStep(rt);
        const before = walBytes(path);
        await runStep(rt, prepared);
        bytes += walBytes(path) - before;
      }
      return bytes / nStep;
    };
    const handBytes = async () => {
      const before = hand.walBytes();
      for (let i = 0; i < nHand; i++) hand.op();
      return (hand.walBytes() - before) / nHand;
    };
    const r = await sideBySide(ctx, stepBytes, handBytes);
    ctx.report('wal_bytes_step_vs_hand_loop', r, '<=4', `WAL bytes per step: ours ${Math.round(r.a)} B vs hand loop ${Math.round(r.b)} B`);
  } finally {
    hand.close();
    await rt.close();
  }
}
