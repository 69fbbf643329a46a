import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type LlmProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
async function runtime(path = ':memory:') {
  const rt = await openRuntime({ path, plugins: [capabilities(), objectMemory(), session()] });
  open.push(rt);
  return rt;
}
/** A provider that must never be asked: resumed calls run without a model turn. */
const noModel: LlmProvider = {
  name: 'none',
  model: 'none',
  completeAction: async () => {
    throw new Error('the model was asked during a resume');
  },
};

/** P may create Objects in the shared namespace only with a human's approval (an `ask` grant). */
async function setup(rt: Runtime) {
  const owner = await rt.spawn({ goal: 'owns shared' });
  await rt.activateSkill(owner.pid, 'agent-libos-object-memory');
  expect((await rt.call(owner.pid, 'create_memory_namespace', { namespace: 'shared' })).ok).toBe(true);
  await rt.signal(owner.pid, 'pause'); // only P is scheduled below
  const p = await rt.spawn({ goal: 'writes to shared' });
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  await rt.grant(p.pid, 'object_namespace:shared', ['write'], { effect: 'ask' });
  return p;
}
const create = (rt: Runtime, pid: string, name: string, payload: unknown = { v: 1 }) =>
  rt.call(pid, 'create_memory_object', { type: 'observation', namespace: 'shared', name, payload });
const objectsIn = async (rt: Runtime, pid: string) => {
  const r = await rt.call(pid, 'list_memory_namespace', { namespace: 'shared' });
  return r.ok ? (r.payload as { objects: { name: string }[] }).objects.map((o) => o.name) : r.error.code;
};

describe('human approval of ask grants', () => {
  it('[CAP-37] ask parks the call; approve-once resumes it exactly once; the same or changed arguments ask again', async () => {
    const rt = await runtime();
    const p = await setup(rt);
    const first = await create(rt, p.pid, 'a');
    expect(first).toMatchObject({ ok: true, wait: { kind: 'human' } });
    expect((await rt.process(p.pid)).status).toBe('waiting_human');
    const [req] = await rt.humanRequests({ status: 'pending', pid: p.pid });
    expect(req).toMatchObject({
      kind: 'permission',
      details: { mode: 'per_use', resource: 'object_namespace:shared', rights: ['write'], tool: 'create_memory_object' },
    });

    await rt.answerHuman(req!.id, { approved: true });
    expect((await rt.process(p.pid)).status).toBe('runnable');
    const report = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ kind: 'resumed', executed: ['create_memory_object'] });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: true, payload: { name: 'a', namespace: 'shared' } });
    await rt.grant(p.pid, 'object_namespace:shared', ['read']);
    expect(await objectsIn(rt, p.pid)).toEqual(['a']);

    // The approval was for those exact arguments, once: a new call with changed arguments asks again.
    const second = await create(rt, p.pid, 'b');
    expect(second).toMatchObject({ ok: true, wait: { kind: 'human' } });
    expect(await rt.humanRequests({ status: 'pending', pid: p.pid })).toHaveLength(1);
  });

  it('[CAP-37] a rejection refuses the saved call without running it', async () => {
    const rt = await runtime();
    const p = await setup(rt);
    await create(rt, p.pid, 'a');
    const [req] = await rt.humanRequests({ status: 'pending', pid: p.pid });
    await rt.answerHuman(req!.id, { approved: false, decision: 'ask_each_time' });
    const report = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await rt.grant(p.pid, 'object_namespace:shared', ['read']);
    expect(await objectsIn(rt, p.pid)).toEqual([]);
  });

  it('an always_deny answer survives a reopen: the retry is denied without asking', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-approval-'));
    dirs.push(dir);
    const path = join(dir, 'libos.db');
    let rt = await runtime(path);
    const p = await setup(rt);
    await create(rt, p.pid, 'a');
    const [req] = await rt.humanRequests({ status: 'pending', pid: p.pid });
    await rt.answerHuman(req!.id, { approved: false, decision: 'always_deny' });
    await rt.run({ provider: noModel, maxQuanta: 1 });
    await rt.close();
    open.splice(open.indexOf(rt), 1);

    rt = await runtime(path);
    const retry = await create(rt, p.pid, 'a');
    expect(retry).toMatchObject({ ok: false, error: { category: 'permission_denied' } });
    expect(await rt.humanRequests({ status: 'pending' })).toEqual([]);
  });

  it('contradictory answers are refused and leave the request pending', async () => {
    const rt = await runtime();
    const p = await setup(rt);
    await create(rt, p.pid, 'a');
    const [req] = await rt.humanRequests({ status: 'pending', pid: p.pid });
    await expect(rt.answerHuman(req!.id, { approved: true, decision: 'always_deny' })).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(rt.answerHuman(req!.id, { approved: false, decision: 'always_allow' })).rejects.toMatchObject({
      code: 'invalid_arguments',
    });
    expect((await rt.humanRequests({ pid: p.pid }))[0]!.status).toBe('pending');
    expect((await rt.process(p.pid)).status).toBe('waiting_human');
  });

  it('request_permission: an always_allow answer installs the record at once; the resumed call reports approved', async () => {
    const rt = await runtime();
    const owner = await rt.spawn({ goal: 'owns shared' });
    await rt.activateSkill(owner.pid, 'agent-libos-object-memory');
    await rt.call(owner.pid, 'create_memory_namespace', { namespace: 'shared' });
    await rt.signal(owner.pid, 'pause');
    const p = await rt.spawn({ goal: 'needs shared' });
    await rt.activateSkill(p.pid, 'agent-libos-authority');
    await rt.activateSkill(p.pid, 'agent-libos-object-memory');
    await rt.grant(p.pid, 'human:owner', ['write']);
    const asked = await rt.call(p.pid, 'request_permission', {
      resource: 'object_namespace:shared',
      rights: ['write'],
      reason: 'to file my notes',
    });
    expect(asked).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const [req] = await rt.humanRequests({ status: 'pending', pid: p.pid });
    await rt.answerHuman(req!.id, { approved: true, decision: 'always_allow' });
    expect((await rt.capabilities(p.pid)).some((c) => c.resource === 'object_namespace:shared' && c.effect === 'allow')).toBe(true);
    const report = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: true, payload: { request_id: req!.id, status: 'approved' } });
    expect(await create(rt, p.pid, 'note')).toMatchObject({ ok: true, payload: { name: 'note' } });
    expect((await rt.capabilities(p.pid)).filter((c) => c.resource === 'object_namespace:shared')).toHaveLength(1);
  });
});
