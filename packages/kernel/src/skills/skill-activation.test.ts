import { definePlugin, defineTool, LibosError, skillFromText, z, type ImageDefinition, type Plugin } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { notesPlugin } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';

// Activating a Skill adds its tools to the process's callable table (the skill:<id> execute grant is the gate, and
// capabilities still decide each call); an image with an exact table opts out (docs/behaviour/kernel.md, K-30..K-32).

const NOTES_TOOLS = ['note_write', 'note_write_then_fail', 'note_write_then_crash', 'note_count'];

const image = (id: string, parts: Partial<ImageDefinition>): ImageDefinition => ({
  id,
  description: id,
  systemPrompt: 'Test.',
  promptMode: 'libos_default',
  defaultSkills: ['agent-libos-skill-navigation'],
  defaultTools: ['discover_skills', 'activate_skill', 'unload_skill'],
  ...parts,
});

/** Images over the notes plugin: one whose table grows, two exact ones (by policy, and by image_only). */
function imagesPlugin(): Plugin {
  return definePlugin({
    name: 'test-activation-images',
    version: '0.0.0',
    skills: [],
    tools: [],
    images: [
      image('open-agent:v0', {}),
      image('exact-agent:v0', { toolTablePolicy: 'exact' }),
      image('only-agent:v0', { promptMode: 'image_only' }),
      image('notes-first:v0', { defaultTools: ['discover_skills', 'activate_skill', 'unload_skill', 'note_count'] }),
    ],
  });
}

const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
});
async function runtime(...extra: Plugin[]): Promise<Runtime> {
  const rt = await openRuntime({ path: ':memory:', plugins: [notesPlugin(), imagesPlugin(), ...extra] });
  open.push(rt);
  return rt;
}

describe('activating a Skill extends the callable table', () => {
  it('[K-30] on base-agent:v0, activate_skill returns the Skill tools; they become callable on that process only', async () => {
    const rt = await runtime();
    const p1 = await rt.spawn({ goal: 'one' });
    const p2 = await rt.spawn({ goal: 'two' });
    expect(p1.toolTable).not.toContain('note_write');
    await rt.grant(p1.pid, 'skill:test-notes', ['execute']);
    const r = await rt.call(p1.pid, 'activate_skill', { skill_id: 'test-notes' });
    expect(r).toMatchObject({ ok: true, payload: { skill_id: 'test-notes', tool_names: NOTES_TOOLS, already_active: false } });
    const after = await rt.process(p1.pid);
    expect(after.toolTable).toEqual([...p1.toolTable, ...NOTES_TOOLS]);
    expect(after.visibleTools).toEqual(expect.arrayContaining(NOTES_TOOLS));
    expect((await rt.toolSchemas(p1.pid)).map((t) => t.name)).toContain('note_write');
    // The table is per process: p2 never activated it.
    expect(await rt.call(p2.pid, 'note_count', {})).toMatchObject({ ok: false, error: { code: 'tool_not_in_process_table' } });
    // Activating again changes nothing and reports the same tools.
    expect(await rt.call(p1.pid, 'activate_skill', { skill_id: 'test-notes' })).toMatchObject({
      ok: true,
      payload: { tool_names: NOTES_TOOLS, already_active: true },
    });
    expect((await rt.process(p1.pid)).toolTable).toEqual(after.toolTable);
  });

  it('[K-31] the table grants nothing: each call still needs its capability', async () => {
    const rt = await runtime();
    const p = await rt.spawn({ goal: 'x' });
    await rt.grant(p.pid, 'skill:test-notes', ['execute']);
    await rt.call(p.pid, 'activate_skill', { skill_id: 'test-notes' });
    expect(await rt.call(p.pid, 'note_write', { key: 'a', text: 'hi' })).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(await rt.call(p.pid, 'note_count', {})).toMatchObject({ ok: true, payload: { count: 0 } });
    await rt.grant(p.pid, 'note:a', ['write']);
    expect(await rt.call(p.pid, 'note_write', { key: 'a', text: 'hi' })).toMatchObject({ ok: true, payload: { key: 'a' } });
    expect(await rt.call(p.pid, 'note_count', {})).toMatchObject({ ok: true, payload: { count: 1 } });
  });

  it('[K-31] without execute on skill:<id> nothing is loaded and the table stays as it was', async () => {
    const rt = await runtime();
    const p = await rt.spawn({ goal: 'x' });
    expect(await rt.call(p.pid, 'activate_skill', { skill_id: 'test-notes' })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
    expect(await rt.process(p.pid)).toMatchObject({ toolTable: p.toolTable, loadedSkills: p.loadedSkills, revision: p.revision });
    expect(await rt.call(p.pid, 'note_count', {})).toMatchObject({ ok: false, error: { code: 'tool_not_in_process_table' } });
  });

  it('[K-32] unloading takes back what activation added; tools the image names stay callable', async () => {
    const rt = await runtime();
    const open1 = await rt.spawn({ image: 'open-agent:v0', goal: 'x' });
    const first = await rt.spawn({ image: 'notes-first:v0', goal: 'y' });
    for (const p of [open1, first]) {
      await rt.grant(p.pid, 'skill:test-notes', ['execute']);
      await rt.call(p.pid, 'activate_skill', { skill_id: 'test-notes' });
    }
    const r = await rt.call(open1.pid, 'unload_skill', { skill_id: 'test-notes' });
    expect(r).toMatchObject({ ok: true, payload: { removed_tools: [...NOTES_TOOLS].sort() } });
    expect((await rt.process(open1.pid)).toolTable).toEqual(open1.toolTable);
    expect(await rt.call(open1.pid, 'note_count', {})).toMatchObject({ ok: false, error: { code: 'tool_not_in_process_table' } });
    // note_count is the image's own: it stays in the table (not visible until a Skill that names it is loaded).
    await rt.call(first.pid, 'unload_skill', { skill_id: 'test-notes' });
    const after = await rt.process(first.pid);
    expect(after.toolTable).toEqual(first.toolTable);
    expect(after.visibleTools).not.toContain('note_count');
    // Capabilities are untouched either way.
    expect((await rt.capabilities(open1.pid)).map((c) => c.resource)).toEqual(['skill:test-notes']);
  });

  it('an exact table (toolTablePolicy exact, or an image_only image) loads the Skill but adds no tool', async () => {
    const rt = await runtime();
    for (const id of ['exact-agent:v0', 'only-agent:v0']) {
      const p = await rt.spawn({ image: id, goal: 'x' });
      await rt.grant(p.pid, 'skill:test-notes', ['execute']);
      const r = await rt.call(p.pid, 'activate_skill', { skill_id: 'test-notes' });
      expect(r, id).toMatchObject({ ok: true, payload: { skill_id: 'test-notes', tool_names: [] } });
      const after = await rt.process(p.pid);
      expect(Object.keys(after.loadedSkills), id).toContain('test-notes');
      expect(after.toolTable, id).toEqual(p.toolTable);
      expect(await rt.call(p.pid, 'note_count', {}), id).toMatchObject({ ok: false, error: { code: 'tool_not_in_process_table' } });
    }
  });

  it('a host activation follows the same rule; exec_process starts again from the new image', async () => {
    const rt = await runtime();
    const p = await rt.spawn({ goal: 'x' });
    const active = await rt.activateSkill(p.pid, 'test-notes');
    expect(active.toolTable).toEqual(expect.arrayContaining(NOTES_TOOLS));
    await rt.activateSkill(p.pid, 'agent-libos-agent-images');
    await rt.grant(p.pid, 'image:open-agent:v0', ['read']);
    const r = await rt.call(p.pid, 'exec_process', { image: 'open-agent:v0', preserve_capabilities: true });
    expect(r).toMatchObject({ ok: true, payload: { tool_table: ['discover_skills', 'activate_skill', 'unload_skill'] } });
    expect((await rt.process(p.pid)).toolTable).toEqual(['discover_skills', 'activate_skill', 'unload_skill']);
  });

  it('an image default Skill adds its tools at spawn unless the table is exact', async () => {
    const rt = await runtime(
      definePlugin({
        name: 'test-default-skill-images',
        version: '0.0.0',
        skills: [],
        tools: [],
        images: [
          image('notes-agent:v1', { defaultSkills: ['agent-libos-skill-navigation', 'test-notes'] }),
          image('notes-exact:v1', { defaultSkills: ['test-notes'], defaultTools: ['note_count'], toolTablePolicy: 'exact' }),
        ],
      }),
    );
    expect((await rt.spawn({ image: 'notes-agent:v1', goal: 'x' })).visibleTools).toEqual(expect.arrayContaining(NOTES_TOOLS));
    const exact = await rt.spawn({ image: 'notes-exact:v1', goal: 'x' });
    expect(exact.toolTable).toEqual(['note_count']);
    expect(exact.visibleTools).toEqual(['note_count']);
  });

  it('an unknown toolTablePolicy fails the load naming the image', async () => {
    const bad = definePlugin({
      name: 'bad-images',
      version: '0.0.0',
      skills: [],
      tools: [],
      images: [image('odd-agent:v0', { toolTablePolicy: 'closed' as 'exact' })],
    });
    await expect(openRuntime({ path: ':memory:', plugins: [bad] })).rejects.toMatchObject({
      code: 'plugin_invalid',
      message: expect.stringContaining('images[odd-agent:v0].toolTablePolicy: "closed" must be one of extend_on_activation, exact'),
    });
  });
});

describe('plugin error codes', () => {
  const SKILL = `---\nname: test-weather\ndescription: Weather (kernel test fixture).\nallowed-tools: kt_weather\n---\nAsk for a city.\n`;
  const weather = (errorCodes: Record<string, 'unavailable' | 'conflict'>, throws: string, name = 'test-weather') =>
    definePlugin({
      name,
      version: '1.0.0',
      skills: [skillFromText(SKILL, 'test-weather')],
      errorCodes,
      tools: [
        defineTool({
          name: 'kt_weather',
          description: 'Weather for a city.',
          input: z.object({ city: z.string() }),
          async run({ city }) {
            throw new LibosError(throws, `city: no weather for ${city}`, { details: { field: 'city' } });
          },
        }),
      ],
    });

  it('[K-57] a code the plugin declared reaches the envelope with its category; an undeclared one is internal_error', async () => {
    const rt = await runtime(weather({ kt_weather_down: 'unavailable' }, 'kt_weather_down'));
    const p = await rt.spawn({ goal: 'x' });
    await rt.activateSkill(p.pid, 'test-weather');
    expect(await rt.call(p.pid, 'kt_weather', { city: 'Oslo' })).toMatchObject({
      ok: false,
      error: { code: 'kt_weather_down', category: 'unavailable', message: 'city: no weather for Oslo', details: { field: 'city' } },
    });
    expect((await rt.audit({ pid: p.pid, action: 'tool.call' })).at(-1)).toMatchObject({ decision: 'kt_weather_down' });
    await rt.close();

    const rt2 = await runtime(weather({}, 'kt_weather_never_declared'));
    const p2 = await rt2.spawn({ goal: 'x' });
    await rt2.activateSkill(p2.pid, 'test-weather');
    const r = await rt2.call(p2.pid, 'kt_weather', { city: 'Oslo' });
    expect(r).toMatchObject({ ok: false, error: { code: 'internal_error', category: 'internal' } });
    expect(!r.ok && r.error.message).toContain('unknown code "kt_weather_never_declared"');
  });

  it('a kernel code, a category outside the closed set, or one code in two plugins fails the load', async () => {
    const kernelCode = { ...weather({}, 'not_found'), errorCodes: { not_found: 'not_found' } } as Plugin;
    await expect(openRuntime({ path: ':memory:', plugins: [kernelCode] })).rejects.toMatchObject({
      code: 'plugin_invalid',
      message: expect.stringContaining('plugin test-weather: errorCodes.not_found: is a kernel code'),
    });
    const oddCategory = { ...weather({}, 'x'), errorCodes: { kt_odd: 'teapot' } } as unknown as Plugin;
    await expect(openRuntime({ path: ':memory:', plugins: [oddCategory] })).rejects.toMatchObject({
      message: expect.stringContaining('errorCodes.kt_odd: category "teapot" must be one of invalid_argument'),
    });
    const other = definePlugin({ name: 'other', version: '1.0.0', skills: [], tools: [], errorCodes: { kt_shared: 'conflict' } });
    await expect(
      openRuntime({ path: ':memory:', plugins: [weather({ kt_shared: 'conflict' }, 'kt_shared'), other] }),
    ).rejects.toMatchObject({
      message: expect.stringContaining('plugin other: errorCodes.kt_shared: is already declared by plugin test-weather'),
    });
  });
});

describe('images spread from the kernel ones (@libos/sdk exports them)', () => {
  it("keeps the kernel image's groups (a group of an unloaded Skill is left out) and checks the tools it adds", async () => {
    const { BASE_AGENT } = await import('@libos/sdk');
    const notesAgent = {
      ...BASE_AGENT,
      id: 'notes-base:v0',
      defaultSkills: [...BASE_AGENT.defaultSkills, 'test-notes'],
      defaultTools: [...BASE_AGENT.defaultTools, 'note_count'],
    };
    const rt = await runtime(definePlugin({ name: 'test-spread-images', version: '0.0.0', skills: [], tools: [], images: [notesAgent] }));
    // Only the kernel's own groups are loaded here (no standard plugins): their tools, then the image's own.
    const base = await rt.spawn({ image: 'base-agent:v0', goal: 'x' });
    const p = await rt.spawn({ image: 'notes-base:v0', goal: 'x' });
    // The image's table (the base one's, then its own tool) comes first; its default Skill's tools follow.
    expect(p.toolTable.slice(0, base.toolTable.length + 1)).toEqual([...base.toolTable, 'note_count']);
    expect(Object.keys(p.loadedSkills)).toEqual(['agent-libos-skill-navigation', 'test-notes']);
    expect(p.visibleTools).toEqual(expect.arrayContaining(NOTES_TOOLS));
    const bad = { ...BASE_AGENT, id: 'bad-base:v0', defaultTools: [...BASE_AGENT.defaultTools, 'ghost_tool'] };
    await expect(
      openRuntime({ path: ':memory:', plugins: [definePlugin({ name: 'bad', version: '0.0.0', skills: [], tools: [], images: [bad] })] }),
    ).rejects.toMatchObject({
      code: 'plugin_invalid',
      message: expect.stringContaining('plugin bad: images[bad-base:v0].defaultTools: unknown tool "ghost_tool"'),
    });
  });
});
