// Broker-call figures: a checked call and a 1 KB append against a raw 1 KB insert, append cost at ledger length
// 1,000 vs 1, and an Object check when the caller owns 10,000 Objects vs 1.
import { join } from 'node:path';
import { formatRatio, msPerOp, oneWarmRound, sideBySide } from '../lib/measure.mjs';
import { callOk, createLedgers, flushShare, openBenchRuntime, spawnChecked } from '../lib/libos.mjs';
import { callWritesFloor, insertFloor } from '../lib/sqlite-floor.mjs';

/** A 1 KB entry: its JSON text is exactly 1,024 bytes. */
const ENTRY_1KB = { text: 'x'.repeat(1013) };
/** A ~100-byte ledger entry (1,000 of them stay under the 200,000 payload bound). */
const smallEntry = (i) => ({ i, note: 'x'.repeat(80) });

/** `count` host-created Objects owned by `pid` (not attached to its view), in transactions of 500. */
async function createOwnedObjects(rt, pid, count) {
  for (let done = 0; done < count; ) {
    const batch = Math.min(500, count - done);
    await rt.transaction(async (scope) => {
      const objects = scope.service('objects');
      for (let i = done; i < done + batch; i++) {
        await objects.createForProcess(pid, { type: 'observation', name: `owned-${i}`, payload: { i }, attachToView: false });
      }
    });
    done += batch;
  }
}

export async function callFigures(ctx) {
  const rt = await openBenchRuntime(join(ctx.dir, 'calls.db'));
  const floor = insertFloor(join(ctx.dir, 'floor.db'));
  try {
    const nFloor = ctx.n(2000);
    const floorSide = () => msPerOp(nFloor, floor.op);

    // call_checked_vs_insert: get_current_time checks read on clock:now (one grant of its kind).
    const caller = await spawnChecked(rt);
    const nCall = ctx.n(40);
    const callBlock = async () => (await msPerOp(nCall, () => callOk(rt, caller, 'get_current_time', {}))) + flushShare(rt, nCall);
    const checked = await sideBySide(ctx, callBlock, floorSide);
    ctx.report('call_checked_vs_insert', checked, '<=4', `get_current_time via rt.call vs one 1 KB insert (${nCall} / ${nFloor} a block)`);
    // Not a figure: what the rows such a call must write cost by themselves, hand-written, against the same insert.
    const writes = callWritesFloor(join(ctx.dir, 'call-writes.db'));
    try {
      const own = await sideBySide(oneWarmRound(ctx), () => msPerOp(nFloor, writes.ownTx), floorSide);
      const grouped = await sideBySide(oneWarmRound(ctx), () => msPerOp(nFloor, writes.grouped), floorSide);
      ctx.note(
        `call_checked_vs_insert: the call's own rows (a budget update, 4 events, 4 audit rows), hand-written, cost ` +
          `${formatRatio(own.ratio)}x the insert in a transaction of their own, ${formatRatio(grouped.ratio)}x batched as the ` +
          'kernel batches them (a savepoint each, a 2 KB redo-log write each, a commit every 256): the floor under the figure',
      );
    } finally {
      writes.close();
    }

    // append_1kb_vs_insert: each append goes to its own ledger of length 1, in a process made for the block.
    const nAppend = ctx.n(20);
    const append1kb = async (k) => {
      const pid = await spawnChecked(rt, { objects: true });
      const names = Array.from({ length: nAppend }, (_, i) => `a1k-${k}-${i}`);
      await createLedgers(rt, pid, names, [ENTRY_1KB]);
      rt.flush();
      const ms = await msPerOp(nAppend, (i) => callOk(rt, pid, 'append_memory_object', { name: names[i], entry: ENTRY_1KB }));
      return ms + flushShare(rt, nAppend);
    };
    const append = await sideBySide(ctx, append1kb, floorSide);
    const appendDetail = `1 KB append_memory_object via rt.call to a ledger of length 1 vs a 1 KB insert (${nAppend} / ${nFloor} a block)`;
    ctx.report('append_1kb_vs_insert', append, '<=5', appendDetail);

    // append_len1000_vs_len1: the same ~100-byte append to ledgers of 1,000 entries vs 1 entry.
    const appendAtLength = (length) => async (k) => {
      const pid = await spawnChecked(rt, { objects: true });
      const names = Array.from({ length: nAppend }, (_, i) => `len${length}-${k}-${i}`);
      await createLedgers(
        rt,
        pid,
        names,
        Array.from({ length }, (_, i) => smallEntry(i)),
      );
      const entry = smallEntry(length);
      rt.flush();
      const ms = await msPerOp(nAppend, (i) => callOk(rt, pid, 'append_memory_object', { name: names[i], entry }));
      return ms + flushShare(rt, nAppend);
    };
    const lengths = await sideBySide(oneWarmRound(ctx), appendAtLength(1000), appendAtLength(1));
    ctx.report('append_len1000_vs_len1', lengths, '<=1.3', `~100-byte append to a ledger of 1,000 entries vs 1 entry (${nAppend} a block)`);

    // check_10k_owned_vs_1: read_memory_object of the caller's goal (checks read on object:<goal oid>).
    const one = await spawnChecked(rt, { objects: true });
    const many = await spawnChecked(rt, { objects: true });
    const t0 = performance.now();
    await createOwnedObjects(rt, many, 9_999);
    ctx.note(`check_10k_owned_vs_1: created 9,999 Objects for the owner of 10,000 in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // Same ops on both sides: an owner's rights derive from ownership, so a check reads no grant per owned Object.
    const nMany = ctx.n(40);
    const nOne = ctx.n(40);
    const readGoal = (pid, n) => async () =>
      (await msPerOp(n, () => callOk(rt, pid, 'read_memory_object', { name: 'goal' }))) + flushShare(rt, n);
    const owned = await sideBySide(oneWarmRound(ctx), readGoal(many, nMany), readGoal(one, nOne));
    const ownedDetail = `read_memory_object (one object check) by a process owning 10,000 Objects vs 1 (${nMany} / ${nOne} a block)`;
    ctx.report('check_10k_owned_vs_1', owned, '<=1.3', ownedDetail);
  } finally {
    floor.close();
    await rt.close();
  }
}
