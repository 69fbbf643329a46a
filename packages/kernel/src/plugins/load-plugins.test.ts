import { definePlugin, defineTool, LibosError, skillFromText, z, type Plugin } from '@libos/sdk';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openRuntime } from '../runtime.js';
import { loadPlugins } from './load-plugins.js';

const tool = (name: string) => defineTool({ name, description: `${name} tool`, input: z.object({}), run: () => ({}) });
const skill = (dir: string, frontmatter: string, body = 'Use the tools.') =>
  skillFromText(`---\n${frontmatter}\n---\n${body}\n`, dir, `plugins/${dir}/SKILL.md`);
const plugin = (name: string, parts: Partial<Plugin>): Plugin => definePlugin({ name, version: '0.0.0', skills: [], tools: [], ...parts });

function loadError(plugins: Plugin[]): LibosError {
  try {
    loadPlugins(plugins, []);
  } catch (err) {
    expect(err).toBeInstanceOf(LibosError);
    return err as LibosError;
  }
  throw new Error('loadPlugins accepted invalid plugins');
}

describe('plugin loader', () => {
  it('loads a valid plugin and records which Skill owns each tool', () => {
    const r = loadPlugins(
      [
        plugin('p', {
          skills: [skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools: a_one a_two')],
          tools: [tool('a_one'), tool('a_two')],
        }),
      ],
      [],
    );
    expect(r.tools.get('a_one')?.skill).toBe('alpha');
    expect(r.skills.get('alpha')?.manifest.allowedTools).toEqual(['a_one', 'a_two']);
  });

  it('[K-63] a plain-JS value that is not shaped like a plugin is plugin_invalid naming each field, not a TypeError', () => {
    const notPlugins = [
      { name: 'weather', version: '1.0.0', skills: [] },
      { name: 'clock', version: '1.0.0', skills: [], tools: [{ name: 'tick', input: z.object({}) }], migrations: {} },
      'not a plugin',
      { version: '1.0.0', skills: [], tools: [] },
    ] as unknown as Plugin[];
    const e = loadError(notPlugins);
    expect(e.code).toBe('plugin_invalid');
    expect(e.message.split('\n').slice(1)).toEqual([
      'plugin weather: tools: must be an array of tool definitions (got undefined)',
      'plugin clock: tools[0].run: must be a function (got undefined)',
      'plugin clock: migrations: must be an array when given (got an object)',
      'plugins[2]: (plugin): must be a plugin object (got "not a plugin")',
      'plugins[3]: name: must be a non-empty string (got undefined)',
    ]);
  });

  it('[K-63] openRuntime with a malformed plugin fails with plugin_invalid and creates no store file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-shape-'));
    try {
      const path = join(dir, 'libos.db');
      const bad = { name: 'weather', version: '1.0.0', skills: [], tools: [{ name: 'forecast' }] } as unknown as Plugin;
      await expect(openRuntime({ path, plugins: [bad] })).rejects.toMatchObject({
        code: 'plugin_invalid',
        message: expect.stringContaining('plugin weather: tools[0].run: must be a function'),
      });
      expect(existsSync(path)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('[K-27] a SKILL.md without a closing --- fails, naming the file and the frontmatter', () => {
    const e = loadError([
      plugin('p', { skills: [skillFromText('---\nname: alpha\ndescription: A.\n', 'alpha', 'plugins/alpha/SKILL.md')], tools: [] }),
    ]);
    expect(e.code).toBe('plugin_invalid');
    expect(e.message).toContain('plugins/alpha/SKILL.md: frontmatter:');
  });

  it('[K-27] malformed YAML frontmatter fails naming the file', () => {
    const e = loadError([plugin('p', { skills: [skill('alpha', 'name: [alpha\ndescription: A.')] })]);
    expect(e.message).toMatch(/plugins\/alpha\/SKILL\.md: frontmatter: YAML does not parse/);
  });

  it('[K-27] an unknown frontmatter key fails naming the key', () => {
    const e = loadError([plugin('p', { skills: [skill('alpha', 'name: alpha\ndescription: A.\nversion: 2')] })]);
    expect(e.message).toContain('plugins/alpha/SKILL.md: version: unknown key');
  });

  it('[K-27] a name that differs from its folder fails naming the name field', () => {
    const e = loadError([plugin('p', { skills: [skill('alpha', 'name: beta\ndescription: A.')] })]);
    expect(e.message).toContain('plugins/alpha/SKILL.md: name: must equal its folder name "alpha"');
  });

  it('rejects a name that breaks the pattern or exceeds 64 characters, and a description over 1024', () => {
    const long = 'a'.repeat(65);
    const e = loadError([
      plugin('p', {
        skills: [skill(long, `name: ${long}\ndescription: ${'d'.repeat(1025)}`), skill('Bad_Name', 'name: Bad_Name\ndescription: A.')],
      }),
    ]);
    expect(e.message).toContain('name: must be at most 64 characters (got 65)');
    expect(e.message).toContain('description: must be at most 1024 characters (got 1025)');
    expect(e.message).toContain('plugins/Bad_Name/SKILL.md: name: must match');
  });

  it('an allowed-tools entry with no definition fails naming the file and allowed-tools', () => {
    const e = loadError([
      plugin('p', { skills: [skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools: a_one ghost')], tools: [tool('a_one')] }),
    ]);
    expect(e.message).toContain('plugins/alpha/SKILL.md: allowed-tools: "ghost" has no tool definition');
  });

  it('a tool defined twice fails naming both plugins', () => {
    const e = loadError([
      plugin('p1', { skills: [skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools: dup')], tools: [tool('dup')] }),
      plugin('p2', { tools: [tool('dup')] }),
    ]);
    expect(e.message).toContain('plugin p2: tools[0].name: tool "dup" is already defined by plugin p1');
  });

  it('a tool that no Skill names fails naming the plugin and tool', () => {
    const e = loadError([
      plugin('p', {
        skills: [skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools: a_one')],
        tools: [tool('a_one'), tool('orphan')],
      }),
    ]);
    expect(e.message).toContain('plugin p: tools: tool "orphan" is not named by any Skill');
  });

  it('a tool owned by two Skills fails', () => {
    const e = loadError([
      plugin('p', {
        skills: [
          skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools: t'),
          skill('beta', 'name: beta\ndescription: B.\nallowed-tools: t'),
        ],
        tools: [tool('t')],
      }),
    ]);
    expect(e.message).toContain('plugins/beta/SKILL.md: allowed-tools: "t" is already owned by skill alpha');
  });

  it('[K-27] allowed-tools as a space-separated string equals the YAML list form', () => {
    const a = loadPlugins(
      [plugin('p', { skills: [skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools: a b')], tools: [tool('a'), tool('b')] })],
      [],
    );
    const b = loadPlugins(
      [
        plugin('p', {
          skills: [skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools:\n  - a\n  - b')],
          tools: [tool('a'), tool('b')],
        }),
      ],
      [],
    );
    expect(a.skills.get('alpha')!.manifest.allowedTools).toEqual(b.skills.get('alpha')!.manifest.allowedTools);
  });

  it('an image naming a tool no loaded plugin defines fails naming the image and the tool: no silent narrowing', () => {
    const img = {
      id: 'x-agent:v0',
      description: 'x',
      systemPrompt: 'x',
      promptMode: 'image_only' as const,
      defaultSkills: [],
      defaultTools: ['nope'],
    };
    const e = loadError([plugin('p', { images: [img] })]);
    expect(e.message).toContain('plugin p: images[x-agent:v0].defaultTools: unknown tool "nope"');
    expect(() => loadPlugins([], [img])).toThrow('kernel: images[x-agent:v0].defaultTools: unknown tool "nope"');
    // A plugin image may carry per-Skill groups (one spread from a kernel image does): the group of an unloaded Skill
    // is left out with it, but a tool it lists outside its groups must still be defined.
    const grouped = { ...img, defaultTools: ['nope', 'also_nope'], toolGroups: [{ skill: 'absent', tools: ['nope'] }] };
    const message = loadError([plugin('p', { images: [grouped] })]).message;
    expect(message).toContain('unknown tool "also_nope"');
    expect(message).not.toContain('unknown tool "nope"');
  });

  it("a kernel image's tool group is left out only with its unloaded Skill; a loaded Skill missing a tool fails", () => {
    const alpha = plugin('p', { skills: [skill('alpha', 'name: alpha\ndescription: A.\nallowed-tools: a_one')], tools: [tool('a_one')] });
    const base = { id: 'k-agent:v0', description: 'k', systemPrompt: 'k', promptMode: 'image_only' as const };
    const groups = [
      { skill: 'alpha', tools: ['a_one'] },
      { skill: 'beta', tools: ['b_one'] },
    ];
    const img = { ...base, defaultSkills: ['alpha', 'beta'], defaultTools: ['a_one', 'b_one'], toolGroups: groups };
    const r = loadPlugins([alpha], [img]);
    expect(r.images.get('k-agent:v0')).toMatchObject({ defaultSkills: ['alpha'], defaultTools: ['a_one'] });
    expect(r.images.get('k-agent:v0')).not.toHaveProperty('toolGroups');
    const missing = { ...img, toolGroups: [{ skill: 'alpha', tools: ['a_one', 'a_two'] }] };
    expect(() => loadPlugins([alpha], [missing])).toThrow(
      'kernel: images[k-agent:v0].defaultTools: unknown tool "a_two": skill alpha is loaded but no plugin defines it',
    );
    const beta = plugin('q', { skills: [skill('beta', 'name: beta\ndescription: B.\nallowed-tools: b_one')], tools: [tool('b_one')] });
    const misfiled = { ...img, toolGroups: [{ skill: 'alpha', tools: ['a_one', 'b_one'] }] };
    expect(() => loadPlugins([alpha, beta], [misfiled])).toThrow('tool "b_one" belongs to skill beta, not alpha');
  });

  it('collects ownership resolvers by kind; a second resolver for a kind or a malformed kind fails naming the plugin', () => {
    const owners = (kind: string) => [{ kind, ownerOf: async () => null, ownedBy: async () => [] }];
    const r = loadPlugins([plugin('p1', { owners: owners('thing') })], []);
    expect([...r.owners.keys()]).toEqual(['thing']);
    expect(loadError([plugin('p1', { owners: owners('thing') }), plugin('p2', { owners: owners('thing') })]).message).toContain(
      'plugin p2: owners[0].kind: resource kind "thing" already has owners from plugin p1',
    );
    expect(loadError([plugin('p1', { owners: owners('Thing') })]).message).toContain('plugin p1: owners[0].kind: "Thing" must match');
  });
});
