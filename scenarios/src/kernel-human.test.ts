import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { commitGroups, fails, openHarness, spawnProbe, type Json } from './support/kernel-harness.js';

// Human waits (docs/behaviour/kernel.md): ask_human parks its process in waiting_human{request_ids}; an answer settles the
// request and wakes the process in one transaction; the saved call is replayed once, without a model call.

const runtimes: Runtime[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function harness(opts: { path?: string; idStart?: number } = {}) {
  const h = await openHarness(opts);
  runtimes.push(h.rt);
  return h;
}

/** A probe agent allowed to ask human:owner. */
async function asker(rt: Runtime, goal = 'ask the owner', parentPid?: string): Promise<string> {
  const pid = await spawnProbe(rt, goal, parentPid);
  await rt.grant(pid, 'human:owner', ['write']);
  return pid;
}

describe('ask_human', () => {
  it(`[K-18] parks in waiting_human{request_ids}; the answer wakes it in the same transaction; the call is replayed exactly once with no \
provider call`, async () => {
    const { rt } = await harness();
    const pid = await asker(rt);
    const provider = new ScriptedProvider({
      processes: {
        [pid]: [[{ tool: 'ask_human', args: { question: 'Which colour?' } }], [{ tool: 'process_exit', args: { message: 'done' } }]],
      },
    });

    const first = await rt.run({ provider });
    expect(first.results).toMatchObject([{ pid, kind: 'turn', stopReason: 'waiting_human', executed: ['ask_human'] }]);
    const [req] = await rt.humanRequests({ pid });
    expect(req).toMatchObject({ kind: 'question', prompt: 'Which colour?', status: 'pending', details: { human: 'owner' } });
    expect(await rt.process(pid)).toMatchObject({ status: 'waiting_human', waitState: { kind: 'human', request_ids: [req!.id] } });
    expect(provider.calls).toBe(1);
    expect(await rt.run({ provider })).toMatchObject({ quanta: 0, idle: true });

    const commits = commitGroups(rt);
    const answered = await rt.answerHuman(req!.id, { approved: true, answer: 'blue' });
    commits.stop();
    expect(answered).toMatchObject({ status: 'approved', response: { approved: true, answer: 'blue', responder: 'human:owner' } });
    expect(await rt.process(pid)).toMatchObject({ status: 'runnable', waitState: null });
    expect(commits.groups).toEqual([expect.arrayContaining(['human_request_answered', 'process_woken'])]);

    const callsAtQuantum: number[] = [];
    const second = await rt.run({ provider, onQuantum: () => callsAtQuantum.push(provider.calls) });
    expect(second.results[0]).toMatchObject({ pid, kind: 'resumed', stopReason: 'completed', executed: ['ask_human'] });
    expect(second.results[0]!.results[0]).toMatchObject({ ok: true, payload: { request_id: req!.id, status: 'approved', answer: 'blue' } });
    expect(callsAtQuantum).toEqual([1, 2]);
    expect(await rt.process(pid)).toMatchObject({ status: 'exited' });
    // Replayed once: one resume, one request, and the answer reached the model's next prompt through its view.
    expect((await rt.events({ type: 'tool_resumed' })).map((e) => e.data.tool)).toEqual(['ask_human']);
    expect(await rt.humanRequests({ pid })).toHaveLength(1);
    expect(provider.requests[1]!.messages[1]!.content).toContain('blue');
  });

  it('[K-19] a rejected question fails the tool call; the process goes on with its next turn', async () => {
    const { rt, probe } = await harness();
    const pid = await asker(rt);
    const provider = new ScriptedProvider({
      processes: {
        [pid]: [
          [{ tool: 'ask_human', args: { question: 'May I?' } }],
          [{ tool: 'probe_touch', args: { label: 'after the refusal' } }],
          [{ tool: 'process_exit', args: { message: 'ok' } }],
        ],
      },
    });
    await rt.run({ provider });
    const [req] = await rt.humanRequests({ pid });
    await rt.answerHuman(req!.id, { approved: false });
    expect((await rt.process(pid)).status).toBe('runnable');

    const report = await rt.run({ provider });
    expect(report.results[0]).toMatchObject({ pid, kind: 'resumed', stopReason: 'tool_failed' });
    expect(report.results[0]!.results[0]).toMatchObject({
      ok: false,
      error: { code: 'permission_denied', details: { request_id: req!.id, status: 'rejected' } },
    });
    expect(probe.runs).toEqual(['after the refusal']);
    expect(await rt.process(pid)).toMatchObject({ status: 'exited' });
    expect(provider.calls).toBe(3);
    const failed = (await rt.audit({ action: 'tool.call' })).filter((a) => a.target === 'tool:ask_human').map((a) => a.decision);
    expect(failed).toEqual(['waiting', 'permission_denied']);
  });

  it('[K-19] a rejected request_permission is not a failure: the resumed call returns the rejected decision', async () => {
    const { rt } = await harness();
    const pid = (await rt.spawn({ goal: 'ask for a permission' })).pid;
    await rt.activateSkill(pid, 'agent-libos-authority');
    await rt.grant(pid, 'human:owner', ['write']);
    const asked = await rt.call(pid, 'request_permission', {
      resource: 'object_namespace:shared',
      rights: ['read'],
      reason: 'to read the shared notes',
    });
    expect(asked).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const [req] = await rt.humanRequests({ pid });
    await rt.answerHuman(req!.id, { approved: false });
    const report = await rt.run({ provider: new ScriptedProvider({ processes: { [pid]: [] } }), maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ pid, kind: 'resumed', stopReason: 'completed' });
    expect(report.results[0]!.results[0]).toMatchObject({
      ok: true,
      payload: { request_id: req!.id, status: 'rejected', resource: 'object_namespace:shared' },
    });
    expect((await rt.capabilities(pid)).some((c) => c.resource === 'object_namespace:shared' && c.effect === 'allow')).toBe(false);
  });

  it('ask_human needs write on human:<name>; without it no request is queued', async () => {
    const { rt } = await harness();
    const pid = await spawnProbe(rt, 'ask without leave');
    expect(await fails(rt, pid, 'ask_human', { question: 'hello?' })).toMatchObject({ code: 'permission_denied' });
    expect(await rt.humanRequests()).toEqual([]);
    expect((await rt.process(pid)).status).toBe('runnable');
    await rt.grant(pid, 'human:owner', ['write']);
    expect(await fails(rt, pid, 'ask_human', { question: 'hello?', human: 'ops' })).toMatchObject({ code: 'permission_denied' });
    expect(await rt.humanRequests()).toEqual([]);
  });

  it(`of two concurrent answers to one request exactly one commits; the other is human_request_not_pending and the process wakes \
once`, async () => {
    const { rt } = await harness();
    const pid = await asker(rt);
    expect(await rt.call(pid, 'ask_human', { question: 'Ship it?' })).toMatchObject({ ok: true, wait: { kind: 'human' } });
    // A waiting process calls nothing more, so it cannot queue a second question.
    expect(await fails(rt, pid, 'ask_human', { question: 'Ship it?' })).toMatchObject({ code: 'process_not_tool_callable' });
    const [req] = await rt.humanRequests({ pid });
    const settled = await Promise.allSettled([
      rt.answerHuman(req!.id, { approved: true, answer: 'yes' }),
      rt.answerHuman(req!.id, { approved: false, responder: 'human:other' }),
    ]);
    const won = settled.filter((s): s is PromiseFulfilledResult<Json> => s.status === 'fulfilled');
    const lost = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toMatchObject({ code: 'human_request_not_pending' });
    const final = (await rt.humanRequests({ pid }))[0]!;
    expect(final.status).toBe(won[0]!.value.status);
    expect((await rt.events({ type: 'human_request_answered' })).length).toBe(1);
    expect((await rt.events({ type: 'process_woken' })).map((e) => e.data.pid)).toEqual([pid]);
    await expect(rt.answerHuman(req!.id, { approved: true, answer: 'late' })).rejects.toMatchObject({ code: 'human_request_not_pending' });
  });

  it('an approved question needs a non-empty answer; a refused answer changes nothing', async () => {
    const { rt } = await harness();
    const pid = await asker(rt);
    await rt.call(pid, 'ask_human', { question: 'Name?' });
    const [req] = await rt.humanRequests({ pid });
    await expect(rt.answerHuman(req!.id, { approved: true })).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(rt.answerHuman(req!.id, { approved: true, answer: '   ' })).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(rt.answerHuman('hreq_00000000000000ff', { approved: true, answer: 'x' })).rejects.toMatchObject({
      code: 'human_request_not_found',
    });
    expect((await rt.humanRequests({ pid }))[0]!.status).toBe('pending');
    expect((await rt.process(pid)).status).toBe('waiting_human');
  });

  it('terminating a process that waits on a human cancels its request (no answer can land) and wakes a parent waiting on it', async () => {
    const { rt } = await harness();
    const parent = await spawnProbe(rt, 'supervise');
    const child = await asker(rt, 'ask and wait', parent);
    await rt.call(child, 'ask_human', { question: 'Continue?' });
    await rt.call(parent, 'wait_child_process', { child_pid: child });
    expect((await rt.process(parent)).status).toBe('waiting_event');
    const [req] = await rt.humanRequests({ pid: child });

    await rt.signal(child, 'terminate', 'owner went home');
    expect(await rt.process(child)).toMatchObject({ status: 'killed', waitState: null, outcome: { kind: 'killed', code: 'terminated' } });
    expect((await rt.humanRequests({ pid: child }))[0]).toMatchObject({ id: req!.id, status: 'cancelled' });
    expect((await rt.events({ type: 'process_exited' })).find((e) => e.data.pid === child)?.data.cancelled_human_requests).toEqual([
      req!.id,
    ]);
    expect((await rt.process(parent)).status).toBe('runnable');
    await expect(rt.answerHuman(req!.id, { approved: true, answer: 'too late' })).rejects.toMatchObject({
      code: 'human_request_not_pending',
    });
    expect((await rt.process(child)).status).toBe('killed');
  });

  it('a human wait survives a reopen; the answer then wakes the process and the saved call resumes without a provider call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-human-'));
    dirs.push(dir);
    const path = join(dir, 'libos.db');
    const first = await harness({ path });
    const pid = await asker(first.rt);
    await first.rt.run({
      provider: new ScriptedProvider({ processes: { [pid]: [[{ tool: 'ask_human', args: { question: 'Deploy?' } }]] } }),
    });
    expect((await first.rt.process(pid)).status).toBe('waiting_human');
    await first.rt.close();

    const { rt } = await harness({ path, idStart: 0x10000 });
    expect(await rt.process(pid)).toMatchObject({ status: 'waiting_human' });
    const [req] = await rt.humanRequests({ status: 'pending' });
    expect(req).toMatchObject({ pid, prompt: 'Deploy?' });
    await rt.answerHuman(req!.id, { approved: true, answer: 'go' });
    const provider = new ScriptedProvider({ processes: { [pid]: [[{ tool: 'process_exit', args: { message: 'deployed' } }]] } });
    const callsAtQuantum: number[] = [];
    const report = await rt.run({ provider, onQuantum: () => callsAtQuantum.push(provider.calls) });
    expect(report.results[0]).toMatchObject({ kind: 'resumed', results: [{ ok: true, payload: { answer: 'go' } }] });
    expect(callsAtQuantum).toEqual([0, 1]);
    expect((await rt.process(pid)).status).toBe('exited');
  });
});
