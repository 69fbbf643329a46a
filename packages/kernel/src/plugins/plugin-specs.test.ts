import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../runtime.js';
import { importPluginSpec, pluginSourceOf, resolvePluginSpec } from './plugin-specs.js';

// A project folder as a user has it: plugin modules beside a config, and packages under node_modules. The modules
// import @libos/sdk from the project's node_modules (a link to this workspace's package).
const SDK = fileURLToPath(new URL('../../../sdk', import.meta.url));
const project = mkdtempSync(join(tmpdir(), 'libos-plugin-specs-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

function write(rel: string, text: string): string {
  const path = join(project, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}
mkdirSync(join(project, 'node_modules', '@libos'), { recursive: true });
symlinkSync(SDK, join(project, 'node_modules', '@libos', 'sdk'), 'dir');

/** A plugin module: one Skill and one tool, `name` naming both. */
const pluginModule = (name: string, exportLine: (expr: string) => string) => `
import { definePlugin, defineTool, skillFromText, z } from '@libos/sdk';
const md = '---\\nname: ${name}\\ndescription: ${name} test skill.\\nallowed-tools: ${name.replace(/-/g, '_')}_echo\\n---\\nEcho.\\n';
${exportLine(`definePlugin({
  name: '${name}', version: '2.1.0', skills: [skillFromText(md, '${name}')],
  tools: [defineTool({
    name: '${name.replace(/-/g, '_')}_echo', description: 'Echo.', input: z.object({ text: z.string() }),
    async run({ text }) { return { text }; },
  })],
})`)}
`;

write(
  'plugins/notes.mjs',
  pluginModule('spec-notes', (e) => `export default ${e};`),
);
write(
  'plugins/factory.mjs',
  pluginModule('spec-factory', (e) => `export function specFactory() { return ${e}; }`),
);
write('plugins/none.mjs', 'export const answer = 42;\n');
write('plugins/broken.mjs', 'throw new Error("cannot start");\n');
write(
  'node_modules/@acme/libos-echo/package.json',
  JSON.stringify({
    name: '@acme/libos-echo',
    version: '2.1.0',
    type: 'module',
    exports: { '.': { import: './dist/index.js', require: './dist/index.cjs' } },
  }),
);
write(
  'node_modules/@acme/libos-echo/dist/index.js',
  pluginModule('acme-echo', (e) => `export const plugin = ${e};`),
);

describe('plugin specs', () => {
  it('a path resolves from the base folder; a package name through node_modules and its exports (import condition)', async () => {
    expect(resolvePluginSpec('./plugins/notes.mjs', project)).toBe(join(project, 'plugins/notes.mjs'));
    expect(resolvePluginSpec('@acme/libos-echo', join(project, 'plugins'))).toBe(
      join(project, 'node_modules/@acme/libos-echo/dist/index.js'),
    );
    const p = await importPluginSpec('@acme/libos-echo', project);
    expect(p).toMatchObject({ name: 'acme-echo', version: '2.1.0' });
    expect(pluginSourceOf(p)).toEqual({ spec: '@acme/libos-echo', file: join(project, 'node_modules/@acme/libos-echo/dist/index.js') });
    expect((await importPluginSpec('./plugins/factory.mjs', project)).name).toBe('spec-factory');
  });

  it('[K-55] a missing spec is not_found naming it; a module without a plugin, or one that throws, is plugin_invalid', async () => {
    await expect(importPluginSpec('./plugins/ghost.mjs', project)).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('plugin ./plugins/ghost.mjs: no such file'),
    });
    await expect(importPluginSpec('@acme/ghost', project)).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining('npm install @acme/ghost'),
    });
    await expect(importPluginSpec('./plugins/none.mjs', project)).rejects.toMatchObject({
      code: 'plugin_invalid',
      message: expect.stringContaining('exports no plugin'),
    });
    await expect(importPluginSpec('./plugins/broken.mjs', project)).rejects.toMatchObject({
      code: 'plugin_invalid',
      message: expect.stringContaining('cannot start'),
    });
    await expect(importPluginSpec('Not A Name!', project)).rejects.toMatchObject({ code: 'invalid_arguments' });
  });

  it("the host config's plugins load from the config file's folder and are listed with their versions", async () => {
    const configPath = write('libos.config.json', JSON.stringify({ plugins: ['./plugins/notes.mjs', '@acme/libos-echo'] }));
    const rt = await openRuntime({ path: join(project, 'libos.db') });
    try {
      expect(rt.hostConfigPath).toBe(configPath);
      const listed = rt.loadedPlugins().filter((p) => p.origin === 'spec');
      expect(listed).toEqual([
        {
          name: 'spec-notes',
          version: '2.1.0',
          origin: 'spec',
          spec: './plugins/notes.mjs',
          file: join(project, 'plugins/notes.mjs'),
          skills: ['spec-notes'],
          tools: 1,
        },
        expect.objectContaining({ name: 'acme-echo', spec: '@acme/libos-echo', skills: ['acme-echo'] }),
      ]);
      expect(rt.loadedPlugins()[0]).toMatchObject({ name: '@libos/kernel:skill-navigation', origin: 'kernel' });
      const p = await rt.spawn({ goal: 'echo' });
      await rt.grant(p.pid, 'skill:spec-notes', ['execute']);
      expect(await rt.call(p.pid, 'activate_skill', { skill_id: 'spec-notes' })).toMatchObject({
        ok: true,
        payload: { tool_names: ['spec_notes_echo'] },
      });
      expect(await rt.call(p.pid, 'spec_notes_echo', { text: 'hi' })).toMatchObject({ ok: true, payload: { text: 'hi' } });
    } finally {
      await rt.close();
      rmSync(configPath);
    }
  });

  it('a config naming a plugin that cannot be found fails the open before the store is created', async () => {
    const dir = join(project, 'bad');
    const configPath = write('bad/libos.config.json', JSON.stringify({ plugins: ['./nope.mjs'] }));
    await expect(openRuntime({ path: join(dir, 'libos.db') })).rejects.toMatchObject({
      code: 'not_found',
      message: expect.stringContaining(join(dir, 'nope.mjs')),
    });
    expect(existsSync(join(dir, 'libos.db'))).toBe(false);
    expect(() => resolvePluginSpec('./nope.mjs', dirname(configPath))).toThrow(/no such file/);
  });
});
