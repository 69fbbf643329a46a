import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage, notesStore } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';

let rt: Runtime;
const noteCount = () =>
  rt.transaction(async (s) =>
    Number(
      (
        await notesStore(s.store)
          .selectFrom('test_notes')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ),
  );

beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
});
afterEach(async () => {
  await rt.close();
});

async function notesProcess(opts: { activate?: boolean; grant?: boolean } = {}) {
  const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'write notes' });
  if (opts.activate !== false) await rt.activateSkill(p.pid, 'test-notes');
  if (opts.grant !== false) await rt.grant(p.pid, 'note:*', ['write']);
  return p;
}

describe('ToolBroker', () => {
  it('[K-36] a successful call commits state, events and one tool.call audit row', async () => {
    const p = await notesProcess();
    const r = await rt.call(p.pid, 'note_write', { key: 'a', text: 'hello' });
    expect(r).toMatchObject({ ok: true, tool: 'note_write', payload: { key: 'a' } });
    expect(await noteCount()).toBe(1);
    const types = (await rt.events({ pid: p.pid })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['tool_called', 'note_written', 'tool_completed']));
    const audit = await rt.audit({ pid: p.pid, action: 'tool.call' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ decision: 'ok', target: 'tool:note_write', callId: r.call_id });
    expect(JSON.stringify(audit[0]!.details)).not.toContain('hello');
  });

  it('[K-33] a tool outside the caller table is refused, nothing runs, and the denial is audited', async () => {
    const p = await notesProcess({ activate: false });
    const r = await rt.call(p.pid, 'note_write', { key: 'a', text: 'x' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('tool_not_in_process_table');
    expect(r.error.message).toContain('activate skill test-notes');
    expect(await noteCount()).toBe(0);
    const audit = await rt.audit({ pid: p.pid, action: 'tool.call' });
    expect(audit.map((a) => a.decision)).toEqual(['tool_not_in_process_table']);
    expect((await rt.events({ pid: p.pid, type: 'tool_called' })).length).toBe(0);
  });

  it('[K-34] bad arguments fail with invalid_arguments naming the field; no state change, no charge', async () => {
    const p = await notesProcess();
    const before = await rt.budget(p.pid);
    const r = await rt.call(p.pid, 'note_write', { key: 5, text: 'x' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('invalid_arguments');
    expect(r.error.message).toMatch(/key: /);
    expect(r.error.details).toMatchObject({ fields: ['key'] });
    const tooLong = await rt.call(p.pid, 'note_write', { key: 'k'.repeat(41), text: 'x' });
    expect(!tooLong.ok && tooLong.error.message).toMatch(/key: .*40/);
    expect(await noteCount()).toBe(0);
    expect((await rt.events({ pid: p.pid, type: 'tool_called' })).length).toBe(0);
    expect((await rt.budget(p.pid)).usage).toEqual(before.usage);
  });

  it('non-object arguments are refused with invalid_arguments', async () => {
    const p = await notesProcess();
    for (const bad of [null, [1], 'x', 3]) {
      const r = await rt.call(p.pid, 'note_count', bad);
      expect(!r.ok && r.error.code).toBe('invalid_arguments');
    }
  });

  it('a tool that throws after writing leaves no row and no audit of success', async () => {
    const p = await notesProcess();
    const r = await rt.call(p.pid, 'note_write_then_fail', { key: 'z' });
    expect(!r.ok && r.error.code).toBe('conflict');
    expect(await noteCount()).toBe(0);
    const audit = await rt.audit({ pid: p.pid, action: 'tool.call' });
    expect(audit.map((a) => a.decision)).toEqual(['conflict']);
    const types = (await rt.events({ pid: p.pid })).map((e) => e.type);
    expect(types).not.toContain('note_written');
    expect(types).not.toContain('tool_completed');
    expect(types).toContain('tool_failed');
  });

  it('a thrown non-LibosError becomes internal_error and is audited', async () => {
    const p = await notesProcess();
    const r = await rt.call(p.pid, 'note_write_then_crash', { key: 'z' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ code: 'internal_error', category: 'internal' });
    expect(r.error.message).toContain('boom');
    expect(await noteCount()).toBe(0);
    const audit = await rt.audit({ pid: p.pid, action: 'tool.call' });
    expect(audit.map((a) => a.decision)).toEqual(['internal_error']);
  });

  it('[K-31] a visible tool that needs a capability the process lacks fails with permission_denied', async () => {
    const p = await notesProcess({ grant: false });
    expect((await rt.process(p.pid)).visibleTools).toContain('note_write');
    const r = await rt.call(p.pid, 'note_write', { key: 'a', text: 'x' });
    expect(!r.ok && r.error.code).toBe('permission_denied');
    expect(await noteCount()).toBe(0);
  });

  it('[K-35] a call charges the pid and every ancestor; an exhausted budget refuses with resource_limit_exceeded', async () => {
    const root = await rt.spawn({ image: 'notes-agent:v0', goal: 'root', budget: { tool_calls: 10 } });
    const child = await rt.spawn({ image: 'notes-agent:v0', goal: 'child', parentPid: root.pid, budget: { tool_calls: 2 } });
    await rt.activateSkill(child.pid, 'test-notes');
    expect((await rt.call(child.pid, 'note_count', {})).ok).toBe(true);
    expect((await rt.budget(child.pid)).usage.tool_calls).toBe(1);
    expect((await rt.budget(root.pid)).usage.tool_calls).toBe(1);
    expect((await rt.call(child.pid, 'note_count', {})).ok).toBe(true);
    const r = await rt.call(child.pid, 'note_count', {});
    expect(!r.ok && r.error.code).toBe('resource_limit_exceeded');
    expect((await rt.budget(child.pid)).usage.tool_calls).toBe(2);
    expect((await rt.budget(root.pid)).usage.tool_calls).toBe(2);
  });

  it('[K-35] a budget exhausted at an ancestor refuses the call with resource_limit_exceeded and charges nobody', async () => {
    const root = await rt.spawn({ image: 'notes-agent:v0', goal: 'root', budget: { tool_calls: 2 } });
    // A child with no tool-call limit of its own is still bounded by every ancestor.
    const child = await rt.spawn({ image: 'notes-agent:v0', goal: 'child', parentPid: root.pid, budget: { tool_calls: null } });
    await rt.activateSkill(child.pid, 'test-notes');
    expect((await rt.call(child.pid, 'note_count', {})).ok).toBe(true);
    expect((await rt.call(child.pid, 'note_count', {})).ok).toBe(true);
    const r = await rt.call(child.pid, 'note_count', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('resource_limit_exceeded');
    expect(r.error.message).toContain(root.pid);
    expect((await rt.budget(root.pid)).usage.tool_calls).toBe(2);
    expect((await rt.budget(child.pid)).usage.tool_calls).toBe(2);
  });

  it('an unknown pid returns process_not_found and writes nothing', async () => {
    const before = (await rt.audit()).length;
    const r = await rt.call('pid_0000000000000000', 'note_count', {});
    expect(!r.ok && r.error.code).toBe('process_not_found');
    expect((await rt.audit()).length).toBe(before);
  });

  it('50 concurrent calls against a 1-use grant commit exactly one effect', async () => {
    const p = await notesProcess({ grant: false });
    await rt.grant(p.pid, 'note:*', ['write'], { uses: 1 });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => rt.call(p.pid, 'note_write', { key: `k${i}`, text: 'x' })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok && r.error.code === 'permission_denied')).toHaveLength(49);
    expect(await noteCount()).toBe(1);
  });
});
