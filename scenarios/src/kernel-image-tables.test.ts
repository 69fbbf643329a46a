import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { definePlugin, defineTool, LibosError, skillFromText, z, type Plugin } from '@libos/sdk';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { afterEach, expect, it } from 'vitest';

// An image's callable table is exactly what it names: a tool no loaded plugin defines fails openRuntime, naming the
// image and the tool, before the store is opened. (A kernel image leaves out only the tools of a Skill whose plugin
// the host did not load.)

let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
});

const tool = (name: string) => defineTool({ name, description: `${name} tool`, input: z.object({}), run: () => ({}) });

async function openFails(plugins: Plugin[]): Promise<{ error: LibosError; db: string }> {
  const db = join(mkdtempSync(join(tmpdir(), 'libos-images-')), 'libos.db');
  try {
    rt = await openRuntime({ path: db, plugins });
  } catch (err) {
    expect(err).toBeInstanceOf(LibosError);
    return { error: err as LibosError, db };
  }
  throw new Error('openRuntime accepted the image');
}

it('a plugin image naming a tool no plugin defines fails openRuntime naming the image and the tool; no store', async () => {
  const image = {
    id: 'ghost-agent:v0',
    description: 'g',
    systemPrompt: 'g',
    promptMode: 'image_only' as const,
    defaultSkills: [],
    defaultTools: ['process_exit', 'ghost_tool'],
  };
  const plugin = definePlugin({ name: 'ghosts', version: '0.0.0', skills: [], tools: [], images: [image] });
  const { error, db } = await openFails([capabilities(), objectMemory(), session(), plugin]);
  expect(error.code).toBe('plugin_invalid');
  expect(error.message).toContain('plugin ghosts: images[ghost-agent:v0].defaultTools: unknown tool "ghost_tool"');
  expect(error.message).not.toContain('process_exit');
  expect(existsSync(db)).toBe(false);
});

it('a loaded Skill lacking a tool a kernel image names fails openRuntime naming base-agent:v0 and the tool', async () => {
  // A stand-in runtime-session Skill without compact_process_context.
  const md = [
    '---',
    'name: agent-libos-runtime-session',
    'description: Time and exit.',
    'allowed-tools: process_exit get_current_time sleep',
    '---',
    'Use them.',
    '',
  ].join('\n');
  const partial = definePlugin({
    name: 'partial-session',
    version: '0.0.0',
    skills: [skillFromText(md, 'agent-libos-runtime-session')],
    tools: [tool('process_exit'), tool('get_current_time'), tool('sleep')],
  });
  const { error } = await openFails([capabilities(), objectMemory(), partial]);
  const named = 'kernel: images[base-agent:v0].defaultTools: unknown tool "compact_process_context"';
  expect(error.message).toContain(`${named}: skill agent-libos-runtime-session is loaded but no plugin defines it`);
});

it('with the standard plugins base-agent:v0 holds every tool of the runtime-session Skill and human_output', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), tasks(), session()] });
  const p = await rt.spawn({ goal: 'look' });
  const expected = ['process_exit', 'compact_process_context', 'get_current_time', 'sleep', 'human_output'];
  expect(p.toolTable).toEqual(expect.arrayContaining(expected));
  const sessionSkill = rt.skillCatalog().find((s) => s.skillId === 'agent-libos-runtime-session')!;
  expect([...sessionSkill.tools].sort()).toEqual(['compact_process_context', 'get_current_time', 'process_exit', 'sleep']);
  for (const name of p.toolTable) expect(rt.hasTool(name)).toBe(true);
});
