import type { Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointAgent, openCheckpointHarness, type CheckpointHarness } from './support/checkpoints-harness.js';
import { ok, type Json } from './support/kernel-harness.js';

// What happens to an ended process's memory (docs/behaviour/session.md S-E8, S-E11): a root's Objects other than its
// exit result are released at its exit; a child's stay until its parent merges them (the parent's own end).

let h: CheckpointHarness | undefined;
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
});

const describeObject = (rt: Runtime, oid: string) => rt.transaction(async (scope) => (scope.service('objects') as Json).describe(oid));
const inspect = (rt: Runtime, oid: string) => rt.transaction(async (scope) => (scope.service('objects') as Json).inspect(oid));

describe('exit and Object memory', () => {
  it('[S-E8] a root exit releases its Objects other than the result; the result stays readable', async () => {
    h = await openCheckpointHarness();
    const { rt } = h;
    const pid = await checkpointAgent(rt);
    const note = (await ok(rt, pid, 'create_memory_object', { type: 'observation', name: 'note', payload: 'scratch' })).oid;
    const goal = (await rt.process(pid)).goalOid!;
    await ok(rt, pid, 'process_exit', { payload: { answer: 42 } });
    const resultOid = ((await rt.process(pid)).outcome as Json).result_oid as string;
    expect(await describeObject(rt, note)).toBeNull();
    expect(await describeObject(rt, goal)).toBeNull();
    expect((await inspect(rt, note)).lifecycle).toBe('released');
    expect(await describeObject(rt, resultOid)).toMatchObject({ ownerKind: 'process_result', ownerId: pid, payloadAvailable: true });
    const payload = await rt.transaction(async (scope) => (scope.service('objects') as Json).readPayload(resultOid));
    expect(payload).toEqual({ answer: 42 });
    // A released name is free again (for whoever may write the namespace).
    expect((await rt.audit({ action: 'object.release_ended' })).at(-1)).toMatchObject({
      target: `process:${pid}`,
      details: { released: 2 },
    });
  });

  it('[S-E11] a child exit keeps its other Objects until the parent merges them; the parent reads the result first', async () => {
    h = await openCheckpointHarness();
    const { rt } = h;
    const parent = await checkpointAgent(rt);
    const child = (await ok(rt, parent, 'spawn_child_process', { goal: 'child work' })).pid as string;
    const work = (await ok(rt, child, 'create_memory_object', { type: 'evidence', name: 'work', payload: { rows: 3 } })).oid;
    await ok(rt, child, 'process_exit', { payload: { summary: 'three rows' } });
    const waited = await ok(rt, parent, 'wait_child_process', { child_pid: child });
    expect(waited).toMatchObject({ status: 'exited', ready: true });
    const mayRead = await rt.transaction(
      async (scope) => (await rt.authority.authorize(scope, parent, `object:${waited.result_oid}`, 'read')).allowed,
    );
    expect(mayRead).toBe(true);
    expect(await rt.transaction(async (scope) => (scope.service('objects') as Json).readPayload(waited.result_oid))).toEqual({
      summary: 'three rows',
    });
    // Kept: the parent has not merged the child's memory yet.
    expect(await describeObject(rt, work)).toMatchObject({ oid: work, ownerId: child, payloadAvailable: true });
    // The parent's own end merges: the child's other Objects go, its result stays.
    await ok(rt, parent, 'process_exit', { message: 'done' });
    expect(await describeObject(rt, work)).toBeNull();
    expect(await describeObject(rt, waited.result_oid)).toMatchObject({ ownerKind: 'process_result', ownerId: child });
  });
});
