import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()] });
});
afterEach(async () => rt.close());

async function proc() {
  const p = await rt.spawn({ goal: 'try to widen my authority' });
  for (const s of ['agent-libos-object-memory', 'agent-libos-child-processes', 'agent-libos-authority']) await rt.activateSkill(p.pid, s);
  return p;
}
const code = async (pid: string, tool: string, args: Record<string, unknown>) => {
  const r = await rt.call(pid, tool, args);
  return r.ok ? 'ok' : r.error.code;
};

describe('model-facing paths cannot raise trust, lower sensitivity or mint a grant', () => {
  it('object metadata that raises trust or integrity, or names a declassification authority, is refused', async () => {
    const p = await proc();
    expect(await code(p.pid, 'create_memory_object', { type: 'claim', payload: 1, metadata: { trust_level: 'trusted' } })).toBe(
      'label_elevation_denied',
    );
    expect(await code(p.pid, 'create_memory_object', { type: 'claim', payload: 1, metadata: { integrity: 'verified' } })).toBe(
      'label_elevation_denied',
    );
    expect(await code(p.pid, 'create_memory_object', { type: 'claim', payload: 1, metadata: { declassification_authority: 'me' } })).toBe(
      'label_elevation_denied',
    );
  });

  it('asking for lower sensitivity than what the process has seen never lowers it', async () => {
    const p = await proc();
    expect(
      await code(p.pid, 'create_memory_object', { type: 'observation', name: 's', payload: 1, metadata: { sensitivity: 'secret' } }),
    ).toBe('ok');
    expect(await code(p.pid, 'read_memory_object', { name: 's' })).toBe('ok');
    const made = await rt.call(p.pid, 'create_memory_object', {
      type: 'summary',
      name: 'pub',
      payload: 'x',
      metadata: { sensitivity: 'public' },
    });
    expect(made.ok).toBe(true);
    const labels = await rt.transaction(
      async (scope) =>
        (await scope
          .service<{ describe(oid: string): Promise<{ labels: { sensitivity: string } } | null> }>('objects')
          .describe((made as { payload: { oid: string } }).payload.oid))!.labels,
    );
    expect(labels.sensitivity).toBe('secret');
  });

  it('a message payload shaped like a grant is refused with delegation_denied and nothing is posted', async () => {
    const p = await proc();
    expect(await code(p.pid, 'send_process_message', { to_pid: p.pid, payload: { resource: 'object:*', rights: ['admin'] } })).toBe(
      'delegation_denied',
    );
    expect(await code(p.pid, 'send_process_message', { to_pid: p.pid, payload: { note: { capability: 'cap_1' } } })).toBe(
      'delegation_denied',
    );
    expect(await rt.messages(p.pid)).toEqual([]);
  });

  it('a delegation can only narrow: wider rights than held are refused with a code that says so', async () => {
    const p = await proc();
    await rt.grant(p.pid, 'process:spawn', ['write']);
    const held = await rt.grant(p.pid, 'object:*', ['read'], { delegable: true });
    const child = await rt.call(p.pid, 'spawn_child_process', { goal: 'child' });
    expect(child.ok).toBe(true);
    const childPid = (child as { payload: { pid: string } }).payload.pid;
    const r = await rt.call(p.pid, 'delegate_capability', {
      capability_id: held.id,
      child_pid: childPid,
      resource: 'object:*',
      rights: ['read', 'write'],
    });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.code).toBe('delegation_denied');
    expect((await rt.capabilities(childPid)).filter((c) => c.resource === 'object:*')).toEqual([]);
  });
});
