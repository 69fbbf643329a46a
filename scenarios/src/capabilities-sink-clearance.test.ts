import { capabilities, DEFAULT_SINK_RULES, type SinkRule } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime, type ToolCallResult } from '@libos/kernel';
import { objectMemory, type ObjectMemoryService } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import type { TaskInfo } from '@libos/tasks';
import { afterEach, describe, expect, it } from 'vitest';
import { ok } from './support/kernel-harness.js';
import { creatorWithOwner, drive, openTaskHarness, TASK_IMAGE } from './support/tasks-harness.js';

// Labels travel with everything a tool creates, and every sink (the prompt, a message, a human request, an exit
// result handed to the parent, a task notification) passes the one clearance check before anything leaves.

let rt: Runtime;
afterEach(async () => rt.close());

async function open(): Promise<Runtime> {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  return rt;
}

const objects = <T>(fn: (svc: ObjectMemoryService) => Promise<T>) =>
  rt.transaction(async (scope) => fn(scope.service<ObjectMemoryService>('objects')));
const describeObject = (oid: string) => objects((svc) => svc.inspect(oid));
const flowOf = (pid: string) => rt.transaction(async (scope) => rt.authority.flow(scope, pid).labels());
const mayRead = (pid: string, oid: string) =>
  rt.transaction(async (scope) => (await rt.authority.authorize(scope, pid, `object:${oid}`, 'read')).allowed);
const setRules = (rules: readonly SinkRule[]) => rt.transaction((scope) => rt.authority.setSinkRules(scope, 'host', rules));

/** Creates an Object of this sensitivity in `pid`'s scope and reads it back (the read taints its flow). */
async function readData(pid: string, sensitivity: string): Promise<void> {
  const args = { type: 'observation', name: 'data', payload: { k: 'v' }, metadata: { sensitivity } };
  const made = await rt.call(pid, 'create_memory_object', args);
  expect(made.ok).toBe(true);
  expect((await rt.call(pid, 'read_memory_object', { name: 'data' })).ok).toBe(true);
}

/** A root process with the memory and child-process Skills that read an Object of this sensitivity. */
async function reader(sensitivity: string, goal = 'read something'): Promise<string> {
  const p = await rt.spawn({ goal });
  for (const s of ['agent-libos-object-memory', 'agent-libos-child-processes']) await rt.activateSkill(p.pid, s);
  await readData(p.pid, sensitivity);
  expect((await flowOf(p.pid)).sensitivity).toBe(sensitivity);
  return p.pid;
}

/** A parent holding process:spawn and a child it spawned (through the model's tool) that read data of `sensitivity`. */
async function parentAndChild(sensitivity: string): Promise<{ parent: string; child: string }> {
  const p = await rt.spawn({ goal: 'delegate' });
  for (const s of ['agent-libos-object-memory', 'agent-libos-child-processes']) await rt.activateSkill(p.pid, s);
  await rt.grant(p.pid, 'process:spawn', ['write']);
  const child = ((await ok(rt, p.pid, 'spawn_child_process', { goal: 'find out' })) as { pid: string }).pid;
  await rt.activateSkill(child, 'agent-libos-object-memory');
  await readData(child, sensitivity);
  return { parent: p.pid, child };
}

const errorOf = (r: ToolCallResult) => {
  expect(r.ok).toBe(false);
  return (r as Extract<ToolCallResult, { ok: false }>).error;
};

describe('exit results carry the child’s labels', () => {
  it('[K-8.2] a secret child’s payload summary is secret; after wait_child_process the parent’s prompt is egress_denied', async () => {
    await open();
    const { parent, child } = await parentAndChild('secret');
    const exited = await ok(rt, child, 'process_exit', { payload: { found: 'the secret' } });
    const summary = await describeObject(exited.result_oid);
    expect(summary).toMatchObject({ type: 'summary', labels: { sensitivity: 'secret' } });
    expect(summary!.provenance.parent_oids.length).toBeGreaterThan(0);

    const waited = await ok(rt, parent, 'wait_child_process', { child_pid: child, block: false });
    expect(waited).toMatchObject({ ready: true, result_oid: exited.result_oid });
    const provider = new ScriptedProvider([[{ tool: 'list_memory_namespace', args: {} }]]);
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ pid: parent, kind: 'failed' });
    expect(provider.calls).toBe(0);
    expect(await rt.process(parent)).toMatchObject({ status: 'failed', outcome: { code: 'egress_denied' } });
    expect((await rt.process(parent)).outcome!.message).toMatch(/llm:scripted.*secret/);
  });

  it('[K-8.2] a message exit is labelled too, and a result_oid exit keeps its Object’s labels', async () => {
    await open();
    const a = await parentAndChild('confidential');
    const byMessage = await ok(rt, a.child, 'process_exit', { message: 'what I found' });
    expect(await describeObject(byMessage.result_oid)).toMatchObject({ type: 'summary', labels: { sensitivity: 'confidential' } });

    const b = await parentAndChild('restricted');
    const own = ((await ok(rt, b.child, 'create_memory_object', { type: 'summary', name: 'mine', payload: 1 })) as { oid: string }).oid;
    const byOid = await ok(rt, b.child, 'process_exit', { result_oid: own });
    expect(byOid.result_oid).toBe(own);
    expect(await describeObject(own)).toMatchObject({ labels: { sensitivity: 'restricted' } });
  });

  it('[K-8.3] an exit result handed to the parent passes clearance: a sink rule below the result’s labels refuses the exit', async () => {
    await open();
    const { parent, child } = await parentAndChild('secret');
    await setRules(DEFAULT_SINK_RULES.map((r) => (r.pattern === 'process:*' ? { ...r, maxSensitivity: 'confidential' } : r)));
    const refused = errorOf(await rt.call(child, 'process_exit', { payload: { found: 'the secret' } }));
    expect(refused).toMatchObject({ code: 'egress_denied', details: { sink: `process:${parent}`, rule: 'process:*' } });
    expect(refused.message).toContain(`process:${parent}`);
    expect(refused.message).toContain('secret');
    // Nothing happened: the child lives and no summary was made.
    expect((await rt.process(child)).status).toBe('runnable');
    expect((await objects((svc) => svc.listObjects({ ownerPid: child }))).filter((o) => o.type === 'summary')).toEqual([]);
  });
});

describe('human requests pass sink clearance', () => {
  it('[CAP-52] ask_human to human:stranger (unmatched) with confidential data is egress_denied: nothing queued, no use spent', async () => {
    await open();
    const pid = await reader('confidential');
    const cap = await rt.grant(pid, 'human:stranger', ['write'], { uses: 1 });
    const refused = errorOf(await rt.call(pid, 'ask_human', { question: 'the data is {k: v}; what now?', human: 'stranger' }));
    expect(refused).toMatchObject({
      code: 'egress_denied',
      details: { sink: 'human:stranger:question', rule: null, labels: { sensitivity: 'confidential' } },
    });
    expect(refused.message).toContain('human:stranger:question');
    expect(refused.message).toContain('confidential');
    expect(await rt.humanRequests()).toEqual([]);
    expect((await rt.capabilities(pid)).find((c) => c.id === cap.id)?.usesRemaining).toBe(1);
    expect((await rt.process(pid)).status).toBe('runnable');
  });

  it('[CAP-52] a sink cleared for the data still gets the question, and a normal-data process may ask a stranger', async () => {
    await open();
    const pid = await reader('secret');
    await rt.grant(pid, 'human:owner', ['write']);
    expect(await rt.call(pid, 'ask_human', { question: 'may I?' })).toMatchObject({ ok: true, wait: { kind: 'human' } });

    const plain = await reader('normal', 'ask around');
    await rt.grant(plain, 'human:stranger', ['write']);
    const asked = await rt.call(plain, 'ask_human', { question: 'which way?', human: 'stranger' });
    expect(asked).toMatchObject({ ok: true, wait: { kind: 'human' } });
    expect((await rt.humanRequests()).map((r) => [r.pid, r.details.human])).toEqual([
      [pid, 'owner'],
      [plain, 'stranger'],
    ]);
  });

  it('[K-8.3] request_permission’s reason goes to a human too: refused for a stranger after confidential data', async () => {
    await open();
    const pid = await reader('confidential');
    await rt.activateSkill(pid, 'agent-libos-authority');
    await rt.grant(pid, 'human:stranger', ['write']);
    const args = { resource: 'clock:now', rights: ['read'], reason: 'the data says {k: v}', human: 'stranger' };
    const refused = errorOf(await rt.call(pid, 'request_permission', args));
    expect(refused).toMatchObject({ code: 'egress_denied', details: { sink: 'human:stranger:permission' } });
    expect(await rt.humanRequests()).toEqual([]);
  });

  it('[K-8.3] a confidential child result in the parent’s prompt taints it: its next ask_human to a stranger is refused', async () => {
    await open();
    const { parent, child } = await parentAndChild('confidential');
    await ok(rt, child, 'process_exit', { payload: { found: 'confidential facts' } });
    await ok(rt, parent, 'wait_child_process', { child_pid: child, block: false });
    await rt.grant(parent, 'human:stranger', ['write']);
    expect((await flowOf(parent)).sensitivity).toBe('normal');
    // The prompt is cleared for llm:* (confidential), so the model sees the result; what it writes next derives from it.
    const question = { question: 'the child found confidential facts', human: 'stranger' };
    const provider = new ScriptedProvider([[{ tool: 'ask_human', args: question }]]);
    const report = await rt.run({ provider, maxQuanta: 1 });
    expect(provider.calls).toBe(1);
    const call = report.results[0]!.results[0];
    expect(call).toMatchObject({ ok: false, error: { code: 'egress_denied', details: { sink: 'human:stranger:question' } } });
    expect((await flowOf(parent)).sensitivity).toBe('confidential');
    expect(await rt.humanRequests()).toEqual([]);
  });
});

describe('task notifications pass sink clearance', () => {
  it('[OT-65] result labels denied for the recipient: task succeeds, notification fails, no handle, GRANT use unspent', async () => {
    rt = (await openTaskHarness()).rt;
    const { pid, owner } = await creatorWithOwner(rt);
    const child = await rt.spawn({ goal: 'reader', image: TASK_IMAGE, parentPid: pid });
    // Confidential: the creator's own prompt (llm:*, cleared to confidential) still goes out while the drive idles it.
    const hot = { type: 'observation', name: 'hot', payload: 1, metadata: { sensitivity: 'confidential' } };
    const made = await rt.call(pid, 'create_memory_object', hot);
    expect(made.ok).toBe(true);
    expect((await flowOf(pid)).sensitivity).toBe('confidential');
    const narrow: SinkRule = {
      pattern: `process:${child.pid}`,
      trustLevel: 'trusted',
      maxSensitivity: 'normal',
      tenants: '*',
      principals: '*',
    };
    await setRules([...DEFAULT_SINK_RULES, narrow]);
    const cap = await rt.grant(pid, 'object:*', ['grant'], { uses: 1 });

    const args = { owner_oid: owner, tool: 'tt_echo', args: { text: 'derived' }, notify_pid: child.pid, grant_result_to_notify: true };
    const t = (await ok(rt, pid, 'start_object_task', args)).task as TaskInfo;
    await drive(rt);
    const done = (await ok(rt, pid, 'get_object_task', { task_id: t.task_id })).task as TaskInfo;
    expect(done.status).toBe('succeeded');
    // The runner's call derives from the creator's arguments: its result carries the creator's labels.
    expect(await describeObject(done.result_oid!)).toMatchObject({ labels: { sensitivity: 'confidential' } });
    expect(done.notification).toMatchObject({ status: 'failed', message_id: null });
    expect(done.notification.error).toContain('egress_denied');
    expect(done.notification.error).toContain(`process:${child.pid}`);
    expect((await rt.messages(child.pid)).filter((m) => m.correlationId === t.task_id)).toEqual([]);
    expect(await mayRead(child.pid, done.result_oid!)).toBe(false);
    expect((await rt.capabilities(pid)).find((c) => c.id === cap.id)?.usesRemaining).toBe(1);
  });
});

describe('what a parent hands a child carries the parent’s labels', () => {
  it('[K-8.2] a goal written by a confidential parent is confidential, and the child’s flow starts there', async () => {
    await open();
    const parent = await reader('confidential', 'delegate');
    await rt.grant(parent, 'process:spawn', ['write']);
    const spawned = (await ok(rt, parent, 'spawn_child_process', { goal: 'use {k: v}' })) as { pid: string; goal_oid: string };
    expect(await describeObject(spawned.goal_oid)).toMatchObject({ type: 'goal', labels: { sensitivity: 'confidential' } });
    expect((await flowOf(spawned.pid)).sensitivity).toBe('confidential');
    await rt.grant(spawned.pid, 'human:stranger', ['write']);
    await rt.activateSkill(spawned.pid, 'agent-libos-child-processes');
    expect(errorOf(await rt.call(spawned.pid, 'ask_human', { question: 'use {k: v}?', human: 'stranger' })).code).toBe('egress_denied');
    // A host spawn is the host's text: nothing to inherit.
    const root = await rt.spawn({ goal: 'fresh' });
    expect((await flowOf(root.pid)).sensitivity).toBe('normal');
    expect((await describeObject(root.goalOid!))!.labels.sensitivity).toBe('normal');
  });
});
