import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime, type ToolCallResult } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, describe, expect, it } from 'vitest';

// human_output: a process's message to a human operator. It needs human:<id> write, passes the sink clearance for
// human:<id>:output, and reaches the operator as one durable human_output event (audited by size and hash only).

let rt: Runtime;
afterEach(async () => rt.close());

async function open(): Promise<Runtime> {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  return rt;
}

/** A root process that sees human_output (its Skill activated). */
async function reporter(goal = 'report to the operator') {
  const p = await rt.spawn({ goal });
  await rt.activateSkill(p.pid, 'agent-libos-human-output');
  return p;
}

const errorOf = (r: ToolCallResult) => {
  expect(r.ok).toBe(false);
  return (r as Extract<ToolCallResult, { ok: false }>).error;
};

/** A root process that read an Object of this sensitivity (the read raises its flow high-water). */
async function reader(sensitivity: string): Promise<string> {
  const p = await reporter();
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  const args = { type: 'observation', name: 'data', payload: { k: 'v' }, metadata: { sensitivity } };
  expect((await rt.call(p.pid, 'create_memory_object', args)).ok).toBe(true);
  expect((await rt.call(p.pid, 'read_memory_object', { name: 'data' })).ok).toBe(true);
  return p.pid;
}

describe('human_output', () => {
  it('needs write on human:<id>: denied, nothing reaches the operator', async () => {
    await open();
    const p = await reporter();
    const denied = errorOf(await rt.call(p.pid, 'human_output', { message: 'hello' }));
    expect(denied.code).toBe('permission_denied');
    expect(denied.message).toContain('human:owner');
    expect(await rt.events({ type: 'human_output' })).toEqual([]);
    expect(await rt.audit({ action: 'human.output' })).toEqual([]);
  });

  it('delivers the text as a human_output event; the audit keeps only its size and sha256', async () => {
    await open();
    const p = await reporter();
    await rt.grant(p.pid, 'human:owner', ['write']);
    const r = await rt.call(p.pid, 'human_output', { message: 'Build is green: 42 tests pass.', kind: 'result' });
    expect(r).toMatchObject({ ok: true, payload: { human: 'owner', sink: 'human:owner:output', chars: 30 } });
    const receipt = (r as Extract<ToolCallResult, { ok: true }>).payload as { output_id: string; sha256: string };
    const [event] = await rt.events({ type: 'human_output' });
    const data = { pid: p.pid, output_id: receipt.output_id, human: 'owner', kind: 'result', text: 'Build is green: 42 tests pass.' };
    expect(event).toMatchObject({ pid: p.pid, data });
    const [audit] = await rt.audit({ action: 'human.output' });
    expect(audit).toMatchObject({ actor: p.pid, target: 'human:owner', decision: 'delivered' });
    expect(JSON.stringify(audit)).not.toContain('Build is green');
    expect(JSON.stringify(audit)).toContain(receipt.sha256);
    // The clearance decision for the sink was recorded too (payload-free).
    const decisions = await rt.audit({ action: 'data_flow.decision' });
    expect(decisions.some((d) => JSON.stringify(d).includes('human:owner:output'))).toBe(true);
  });

  it('[CAP-52] a human not cleared for what the process read gets nothing: egress_denied naming human:<id>:output', async () => {
    await open();
    const pid = await reader('confidential');
    await rt.grant(pid, 'human:stranger', ['write']);
    const refused = errorOf(await rt.call(pid, 'human_output', { message: 'the data is {k: v}', human: 'stranger' }));
    const details = { sink: 'human:stranger:output', labels: { sensitivity: 'confidential' } };
    expect(refused).toMatchObject({ code: 'egress_denied', details });
    expect(refused.message).toContain('human:stranger:output');
    expect(await rt.events({ type: 'human_output' })).toEqual([]);
    // The owner is cleared up to secret: the same process may tell the owner.
    await rt.grant(pid, 'human:owner', ['write']);
    expect((await rt.call(pid, 'human_output', { message: 'the data is {k: v}' })).ok).toBe(true);
  });

  it('rejects a blank message before any authority check', async () => {
    await open();
    const p = await reporter();
    expect(errorOf(await rt.call(p.pid, 'human_output', { message: '   ' })).code).toBe('invalid_arguments');
    expect(await rt.audit({ pid: p.pid, action: 'capability.authorize' })).toEqual([]);
  });

  it('a model sends human output in one turn and exits alone in the next', async () => {
    await open();
    const p = await reporter('Tell the owner the result, then exit.');
    await rt.grant(p.pid, 'human:owner', ['write']);
    const provider = new ScriptedProvider([
      [{ tool: 'human_output', args: { message: 'Done: 3 files changed.' } }],
      [{ tool: 'process_exit', args: {} }],
    ]);
    await rt.run({ provider });
    expect((await rt.process(p.pid)).status).toBe('exited');
    expect((await rt.events({ type: 'human_output' })).map((e) => e.data.text)).toEqual(['Done: 3 files changed.']);
  });
});
