import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type LlmProvider, type Runtime } from '@libos/kernel';
import { definePlugin, defineTool, sequentialIds, skillFromText, z } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ok, openHarness, spawnProbe } from './support/kernel-harness.js';

// A process holds at most one saved waiting call. Once its wait is answered the process is runnable again, so a host
// (libos call, the HTTP API, MCP) can call its tools before the scheduler resumes the saved call: a call that does
// not wait runs, but a call that would wait too is refused with `call_already_waiting` and leaves nothing behind;
// the answered call keeps its answer and resumes on the next run.

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
});

async function harness() {
  const h = await openHarness();
  runtimes.push(h.rt);
  return h;
}

/** A provider that must never be asked: resumed calls run without a model turn. */
const noModel: LlmProvider = {
  name: 'none',
  model: 'none',
  completeAction: async () => {
    throw new Error('the model was asked during a resume');
  },
};

/** `two_gates` writes to human:alpha, then to human:beta: with an `ask` grant on each, it waits twice. */
function twoGatesPlugin(runs: string[]) {
  const tool = defineTool({
    name: 'two_gates',
    description: 'Pass two gates.',
    input: z.object({ label: z.string().min(1).max(64) }),
    async run({ label }, ctx) {
      await ctx.authority.require('human:alpha', 'write');
      await ctx.authority.require('human:beta', 'write');
      runs.push(label);
      return { label };
    },
  });
  const md = `---\nname: test-two-gates\ndescription: Two gates.\nallowed-tools: two_gates\n---\nCall two_gates.\n`;
  return definePlugin({
    name: 'test-two-gates',
    version: '0.0.0',
    skills: [skillFromText(md, 'test-two-gates')],
    tools: [tool],
    images: [
      {
        id: 'two-gates:v0',
        description: 'two_gates only.',
        systemPrompt: 'Pass the gates.',
        promptMode: 'libos_default',
        defaultSkills: ['test-two-gates'],
        defaultTools: ['two_gates'],
      },
    ],
  });
}

/** The `tool.call` audit decisions of one call, in order. */
async function decisionsOf(rt: Runtime, callId: string): Promise<(string | null)[]> {
  return (await rt.audit({ action: 'tool.call', limit: 10_000 })).filter((a) => a.callId === callId).map((a) => a.decision);
}

describe('one saved waiting call per process', () => {
  it('[K-8.1] an answered ask_human survives a second call that would wait', async () => {
    const { rt, probe } = await harness();
    const pid = await spawnProbe(rt, 'ask the owner twice');
    await rt.grant(pid, 'human:owner', ['write']);

    const first = await rt.call(pid, 'ask_human', { question: 'first?' });
    expect(first).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const [h1] = await rt.humanRequests({ pid });
    await rt.answerHuman(h1!.id, { approved: true, answer: 'ANSWER-1' });
    expect((await rt.process(pid)).status).toBe('runnable');

    // A call that does not wait still runs while the answered call waits to be resumed.
    expect(await ok(rt, pid, 'probe_touch', { label: 'meanwhile' })).toMatchObject({ label: 'meanwhile' });

    const second = await rt.call(pid, 'ask_human', { question: 'second?' });
    expect(second.ok).toBe(false);
    if (second.ok) return;
    expect(second.error).toMatchObject({ code: 'call_already_waiting', category: 'conflict' });
    expect(second.error.details).toMatchObject({ pid, waiting_call_id: first.call_id, waiting_tool: 'ask_human' });
    expect(second.error.message).toContain(first.call_id);
    expect(second.error.message).toContain('libos run');
    // Nothing of the refused call stays: no second question, the process is still runnable, its failure is audited.
    expect((await rt.humanRequests({ pid })).map((r) => r.id)).toEqual([h1!.id]);
    expect((await rt.process(pid)).status).toBe('runnable');
    expect(await decisionsOf(rt, second.call_id)).toEqual(['call_already_waiting']);

    const provider = new ScriptedProvider({ processes: { [pid]: [[{ tool: 'process_exit', args: { message: 'done' } }]] } });
    const report = await rt.run({ provider });
    expect(report.results[0]).toMatchObject({ pid, kind: 'resumed', executed: ['ask_human'] });
    const resumed = report.results[0]!.results[0];
    expect(resumed).toMatchObject({ ok: true, call_id: first.call_id });
    expect(resumed!.ok && resumed!.payload).toMatchObject({ request_id: h1!.id, status: 'approved', answer: 'ANSWER-1' });
    expect(await decisionsOf(rt, first.call_id)).toEqual(['waiting', 'ok']);
    expect(await rt.process(pid)).toMatchObject({ status: 'exited' });
    expect(probe.runs).toEqual(['meanwhile']);
  });

  it('[K-8.1] an approved per-use call survives a second call that would wait for approval', async () => {
    const { rt } = await harness();
    const owner = (await rt.spawn({ goal: 'owns shared' })).pid;
    await rt.activateSkill(owner, 'agent-libos-object-memory');
    await ok(rt, owner, 'create_memory_namespace', { namespace: 'shared' });
    await rt.signal(owner, 'pause'); // only P is scheduled below
    const pid = (await rt.spawn({ goal: 'writes to shared' })).pid;
    await rt.activateSkill(pid, 'agent-libos-object-memory');
    await rt.grant(pid, 'object_namespace:shared', ['write'], { effect: 'ask' });
    const create = (name: string) => rt.call(pid, 'create_memory_object', { type: 'observation', namespace: 'shared', name, payload: {} });

    const first = await create('a');
    expect(first).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const [h1] = await rt.humanRequests({ pid, status: 'pending' });
    await rt.answerHuman(h1!.id, { approved: true });
    expect((await rt.process(pid)).status).toBe('runnable');

    const second = await create('b');
    const details = { waiting_call_id: first.call_id, waiting_tool: 'create_memory_object' };
    expect(second).toMatchObject({ ok: false, error: { code: 'call_already_waiting', details } });
    expect(await rt.humanRequests({ pid, status: 'pending' })).toEqual([]);
    expect((await rt.process(pid)).status).toBe('runnable');
    expect(await decisionsOf(rt, second.call_id)).toEqual(['call_already_waiting']);

    const report = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ pid, kind: 'resumed', executed: ['create_memory_object'] });
    expect(report.results[0]!.results[0]).toMatchObject({ ok: true, call_id: first.call_id, payload: { name: 'a', namespace: 'shared' } });
    expect(await decisionsOf(rt, first.call_id)).toEqual(['approval_required', 'ok']);
    await rt.grant(pid, 'object_namespace:shared', ['read']);
    const listed = await ok(rt, pid, 'list_memory_namespace', { namespace: 'shared' });
    expect(listed.objects.map((o: { name: string }) => o.name)).toEqual(['a']);

    // With the saved call resumed, the same second call may wait now.
    expect(await create('b')).toMatchObject({ ok: true, wait: { kind: 'human' } });
  });

  it('[K-8.1] a resumed call that meets a second ask re-arms its own saved action and resumes again', async () => {
    const runs: string[] = [];
    const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), twoGatesPlugin(runs)], config: { ids: sequentialIds(0) } });
    runtimes.push(rt);
    const pid = (await rt.spawn({ goal: 'pass both gates', image: 'two-gates:v0' })).pid;
    await rt.grant(pid, 'human:alpha', ['write'], { effect: 'ask' });
    await rt.grant(pid, 'human:beta', ['write'], { effect: 'ask' });

    const call = await rt.call(pid, 'two_gates', { label: 'through' });
    expect(call).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const [alpha] = await rt.humanRequests({ pid, status: 'pending' });
    expect(alpha).toMatchObject({ details: { resource: 'human:alpha', call_id: call.call_id } });
    await rt.answerHuman(alpha!.id, { approved: true });

    const rearmed = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(rearmed.results[0]).toMatchObject({ kind: 'resumed', stopReason: 'waiting_human' });
    expect(rearmed.results[0]!.results).toMatchObject([{ ok: true, call_id: call.call_id, wait: { kind: 'human' } }]);
    const [beta] = await rt.humanRequests({ pid, status: 'pending' });
    expect(beta).toMatchObject({ details: { resource: 'human:beta', call_id: call.call_id } });
    await rt.answerHuman(beta!.id, { approved: true });

    const done = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(done.results[0]).toMatchObject({ kind: 'resumed', stopReason: 'completed' });
    expect(done.results[0]!.results).toMatchObject([{ ok: true, call_id: call.call_id, payload: { label: 'through' } }]);
    expect(runs).toEqual(['through']);
    expect(await decisionsOf(rt, call.call_id)).toEqual(['approval_required', 'approval_required', 'ok']);
  });
});
