import { defineTool, definePlugin, skillFromText, z } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from './fake-clock.js';
import { openTestRuntime, TEST_IMAGE, type TestRuntime, type TestRuntimeOptions } from './test-runtime.js';

const SKILL = `---
name: stamp
description: Stamps a note with the runtime's time.
allowed-tools: stamp_note
---
Call stamp_note with a note.
`;

function stampPlugin() {
  const stamp = defineTool({
    name: 'stamp_note',
    description: 'Returns the note, the time and the caller.',
    input: z.object({ note: z.string().min(1).max(20) }),
    output: z.object({ note: z.string(), at: z.string(), pid: z.string() }),
    async run({ note }, ctx) {
      await ctx.authority.require('note:stamp', 'execute');
      return { note, at: ctx.clock.now().toISOString(), pid: ctx.pid };
    },
  });
  return definePlugin({ name: 'stamp', version: '0.0.0', skills: [skillFromText(SKILL, 'stamp')], tools: [stamp] });
}

let t: TestRuntime | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

describe('@libos/testing', () => {
  it('runs a plugin tool through the real broker: sequential pids, the fake clock, grants and refusals', async () => {
    t = await openTestRuntime({ plugins: [stampPlugin()], start: '2026-05-01T10:00:00.000Z' });
    const pid = await t.spawn();
    expect(pid).toBe('pid_0000000000000001');
    expect((await t.runtime.process(pid)).imageId).toBe(TEST_IMAGE);
    expect(await t.fails(pid, 'stamp_note', { note: 'a' })).toMatchObject({ code: 'permission_denied' });
    await t.grant(pid, 'note:stamp', ['execute']);
    t.clock.advance(90_000);
    expect(await t.ok(pid, 'stamp_note', { note: 'a' })).toEqual({ note: 'a', at: '2026-05-01T10:01:30.000Z', pid });
    expect((await t.fails(pid, 'stamp_note', { note: '' })).code).toBe('invalid_arguments');
    await expect(t.ok(pid, 'stamp_note', { note: '' })).rejects.toThrow(/stamp_note failed: .*invalid_arguments/);
  });

  it('spawn grants, activates Skills on another image, and a file store reopens with ids continuing', async () => {
    t = await openTestRuntime({ plugins: [stampPlugin()], store: 'file' });
    const pid = await t.spawn({ image: 'base-agent:v0', grants: [['skill:stamp', ['execute']]], skills: ['stamp'] });
    expect((await t.runtime.process(pid)).loadedSkills).toHaveProperty('stamp');
    await t.reopen();
    expect((await t.runtime.process(pid)).pid).toBe(pid);
    const next = await t.spawn({ parentPid: pid });
    expect(next > pid).toBe(true);
    expect((await t.runtime.process(next)).parentPid).toBe(pid);
  });

  it('a memory store cannot reopen, and the fake clock never goes back', async () => {
    t = await openTestRuntime({ plugins: [] });
    await expect(t.reopen()).rejects.toThrow(/only a file store/);
    const clock = new FakeClock('2026-01-01T00:00:00.000Z');
    await clock.sleep(1_000);
    expect(clock.now().toISOString()).toBe('2026-01-01T00:00:01.000Z');
    expect(() => clock.set('2025-12-31T00:00:00.000Z')).toThrow(TypeError);
    expect(() => clock.advance(-1)).toThrow(TypeError);
  });

  it('kyselyPlugins reach the store: a throw before one INSERT fails that write, and nothing of it is kept', async () => {
    let down = false;
    const inserts: string[] = [];
    const faults: NonNullable<TestRuntimeOptions['kyselyPlugins']>[number] = {
      transformQuery({ node }) {
        const into = node.kind === 'InsertQueryNode' ? (node as unknown as InsertNode).into?.table.identifier.name : undefined;
        if (into !== undefined) inserts.push(into);
        if (down && into !== undefined) throw new Error(`store down: no insert into ${into}`);
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    t = await openTestRuntime({ plugins: [stampPlugin()], kyselyPlugins: [faults] });
    const pid = await t.spawn();
    expect(inserts).toContain('processes');
    down = true;
    await expect(t.grant(pid, 'note:stamp', ['execute'])).rejects.toThrow(/store down: no insert into/);
    down = false;
    expect(await t.fails(pid, 'stamp_note', { note: 'a' })).toMatchObject({ code: 'permission_denied' });
    await t.grant(pid, 'note:stamp', ['execute']);
    expect(await t.ok(pid, 'stamp_note', { note: 'a' })).toMatchObject({ note: 'a', pid });
  });
});

/** The part of kysely's InsertQueryNode the test reads: the table the INSERT writes. */
interface InsertNode {
  readonly into?: { readonly table: { readonly identifier: { readonly name: string } } };
}
