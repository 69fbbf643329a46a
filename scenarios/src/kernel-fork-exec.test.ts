import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
});
afterEach(async () => rt.close());

async function ok(pid: string, tool: string, args: Record<string, unknown>) {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} failed: ${r.error.code}: ${r.error.message}`);
  return r.payload as Record<string, any>;
}

async function parentWithLedger() {
  const p = await rt.spawn({ goal: 'parent' });
  await rt.activateSkill(p.pid, 'agent-libos-child-processes');
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  await rt.grant(p.pid, 'process:spawn', ['write']);
  const ledger = await ok(p.pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: ['a'] }, immutable: false });
  return { p, ledger };
}

describe('fork_child_process', () => {
  it('[K-5] a worker fork sees the parent roots read-only: reads succeed, writes fail', async () => {
    const { p, ledger } = await parentWithLedger();
    const fork = await ok(p.pid, 'fork_child_process', { goal: 'summarise the ledger' });
    expect(fork.root_oids).toContain(ledger.oid);
    const child = await rt.process(fork.pid);
    expect(child).toMatchObject({ parentPid: p.pid, imageId: p.imageId, goal: 'summarise the ledger' });
    expect(Object.keys(child.loadedSkills)).toEqual(expect.arrayContaining(['agent-libos-object-memory', 'agent-libos-child-processes']));
    const read = await ok(fork.pid, 'read_memory_object', { namespace: ledger.namespace, name: 'ledger' });
    expect(read.payload).toEqual({ entries: ['a'] });
    const write = await rt.call(fork.pid, 'append_memory_object', { namespace: ledger.namespace, name: 'ledger', entry: 'b' });
    expect(!write.ok && write.error.category).toBe('permission_denied');
    const caps = await rt.capabilities(fork.pid);
    expect(
      caps
        .filter((c) => c.resource === `object:${ledger.oid}`)
        .flatMap((c) => c.rights)
        .sort(),
    ).toEqual(['materialize', 'read']);
  });

  it('shares only named roots, refuses roots the parent does not hold, and needs process:spawn', async () => {
    const { p, ledger } = await parentWithLedger();
    const other = await ok(p.pid, 'create_memory_object', { type: 'observation', name: 'other', payload: 1 });
    const fork = await ok(p.pid, 'fork_child_process', { root_oids: [ledger.oid] });
    expect(fork.root_oids).toEqual([ledger.oid]);
    const hidden = await rt.call(fork.pid, 'read_memory_object', { namespace: other.namespace, name: 'other' });
    expect(!hidden.ok && hidden.error.code).toBe('object_not_found');
    const bad = await rt.call(p.pid, 'fork_child_process', { root_oids: ['obj_00000000000000ff'] });
    expect(!bad.ok && bad.error.code).toBe('invalid_arguments');
    const q = await rt.spawn({ goal: 'no spawn right' });
    await rt.activateSkill(q.pid, 'agent-libos-child-processes');
    const denied = await rt.call(q.pid, 'fork_child_process', {});
    expect(!denied.ok && denied.error.code).toBe('permission_denied');
    expect((await rt.processes()).filter((x) => x.parentPid === q.pid)).toEqual([]);
  });
});

describe('exec_process', () => {
  it('[K-13] exec keeps pid and usage, takes the target tools and Skills, and grants nothing', async () => {
    const p = await rt.spawn({ goal: 'grow up' });
    await rt.activateSkill(p.pid, 'agent-libos-agent-images');
    await rt.activateSkill(p.pid, 'agent-libos-object-memory');
    await rt.grant(p.pid, 'image:coding-agent:v0', ['read']);
    const hostGrant = await rt.grant(p.pid, 'clock:now', ['read']);
    await ok(p.pid, 'create_memory_object', { type: 'plan', name: 'keep', payload: {}, immutable: false });
    const usageBefore = (await rt.budget(p.pid)).usage.tool_calls!;
    const capsBefore = await rt.capabilities(p.pid);
    const r = await ok(p.pid, 'exec_process', { image: 'coding-agent:v0' });
    expect(r).toMatchObject({ pid: p.pid, image: 'coding-agent:v0', previous_image: 'base-agent:v0' });
    const after = await rt.process(p.pid);
    expect(after.imageId).toBe('coding-agent:v0');
    expect(after.toolTable).toEqual(rt.image('coding-agent:v0')!.defaultTools);
    expect(Object.keys(after.loadedSkills).sort()).toEqual([...rt.image('coding-agent:v0')!.defaultSkills].sort());
    expect(after.stateGeneration).toBeGreaterThan(1);
    expect((await rt.budget(p.pid)).usage.tool_calls).toBe(usageBefore + 1);
    const capsAfter = await rt.capabilities(p.pid);
    // Host grants are dropped; handles on its own memory stay; nothing new appears.
    expect(capsAfter.map((c) => c.id)).not.toContain(hostGrant.id);
    expect(capsAfter.every((c) => capsBefore.some((b) => b.id === c.id))).toBe(true);
    expect(capsAfter.some((c) => c.resource.startsWith('object_namespace:process:'))).toBe(true);
  });

  it('[K-13] exec into another image needs image:<id> read; a waiting process cannot exec', async () => {
    const p = await rt.spawn({ goal: 'x' });
    await rt.activateSkill(p.pid, 'agent-libos-agent-images');
    const denied = await rt.call(p.pid, 'exec_process', { image: 'coding-agent:v0' });
    expect(!denied.ok && denied.error.code).toBe('permission_denied');
    expect((await rt.process(p.pid)).imageId).toBe('base-agent:v0');

    await rt.grant(p.pid, 'image:coding-agent:v0', ['read']);
    await rt.grant(p.pid, 'process:spawn', ['write']);
    await rt.activateSkill(p.pid, 'agent-libos-child-processes');
    const child = await ok(p.pid, 'spawn_child_process', { goal: 'work' });
    const waiting = await rt.call(p.pid, 'wait_child_process', { child_pid: child.pid });
    expect(waiting).toMatchObject({ ok: true, wait: { kind: 'child', child_pid: child.pid } });
    const refused = await rt.call(p.pid, 'exec_process', { image: 'coding-agent:v0' });
    expect(!refused.ok && refused.error.code).toBe('process_not_tool_callable');
    expect((await rt.process(p.pid)).imageId).toBe('base-agent:v0');
  });

  it('preserve_capabilities keeps host grants; an unknown image is refused', async () => {
    const p = await rt.spawn({ goal: 'x' });
    await rt.activateSkill(p.pid, 'agent-libos-agent-images');
    await rt.grant(p.pid, 'image:*', ['read']);
    const g = await rt.grant(p.pid, 'clock:now', ['read']);
    await ok(p.pid, 'exec_process', { image: 'coding-agent:v0', preserve_capabilities: true, goal: 'new goal' });
    expect((await rt.capabilities(p.pid)).map((c) => c.id)).toContain(g.id);
    expect((await rt.process(p.pid)).goal).toBe('new goal');
    await rt.activateSkill(p.pid, 'agent-libos-agent-images');
    const r = await rt.call(p.pid, 'exec_process', { image: 'ghost:v1' });
    expect(!r.ok && r.error.code).toBe('image_not_found');
  });
});
