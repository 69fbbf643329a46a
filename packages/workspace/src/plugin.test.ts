import { parseSkill, skillFromFile, toolInputJsonSchema } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import {
  FILESYSTEM_SKILL_URL,
  FILESYSTEM_TOOLS,
  GIT_SKILL_URL,
  GIT_TOOLS,
  SHELL_SKILL_URL,
  SHELL_TOOLS,
  settleConfig,
  workspace,
  WORKSPACE_TOOLS,
} from './index.js';

describe('the workspace plugin', () => {
  it.each([
    ['agent-libos-filesystem', FILESYSTEM_SKILL_URL, FILESYSTEM_TOOLS],
    ['agent-libos-shell', SHELL_SKILL_URL, SHELL_TOOLS],
    ['agent-libos-git', GIT_SKILL_URL, GIT_TOOLS],
  ] as const)('ships %s naming exactly its tools', (name, url, tools) => {
    const parsed = parseSkill(skillFromFile(url));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(parsed.skill.name).toBe(name);
    expect(parsed.skill.allowedTools).toEqual(tools);
  });

  it('defines every tool its Skills name, each with a JSON Schema a model can read', () => {
    const plugin = workspace({ baseDirectory: '/srv' });
    expect(plugin.tools.map((t) => t.name)).toEqual([...WORKSPACE_TOOLS]);
    for (const t of plugin.tools) expect(toolInputJsonSchema(t)).toMatchObject({ type: 'object' });
    expect(plugin.skills).toHaveLength(3);
  });

  it('refuses options that make no sense, naming them', () => {
    expect(() => settleConfig({ baseDirectory: 'relative' })).toThrow(/baseDirectory/);
    expect(() => settleConfig({ shell: { defaultTimeoutSeconds: 700 } })).toThrow(/defaultTimeoutSeconds/);
    expect(() => settleConfig({ shell: { maxOutputBytes: 10, defaultOutputBytes: 8 } })).toThrow(/maxOutputBytes/);
    expect(() => settleConfig({ git: { timeoutSeconds: 0 } })).toThrow(/git.timeoutSeconds/);
    expect(settleConfig({ baseDirectory: '/srv/../srv/app' }).baseDirectory).toBe('/srv/app');
  });
});
