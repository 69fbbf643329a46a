import { definePlugin, type ImageDefinition } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { loadPlugins } from '../plugins/load-plugins.js';
import { contextManagementProblems, maintenanceSettings, viewTokenBudgetFor } from './context-maintenance.js';

const image = (over: Partial<ImageDefinition>): ImageDefinition => ({
  id: 'cm-agent:v0',
  description: 'x',
  systemPrompt: 'x',
  promptMode: 'image_only',
  defaultSkills: [],
  defaultTools: [],
  ...over,
});

describe('context maintenance settings', () => {
  it('fills the defaults: auto_compact at 0.8 with compact_process_context', () => {
    expect(maintenanceSettings(image({}))).toMatchObject({
      mode: 'auto_compact',
      thresholdRatio: 0.8,
      tool: { name: 'compact_process_context', arguments: {} },
    });
    expect(maintenanceSettings(image({ contextManagement: { mode: 'disabled' } })).mode).toBe('disabled');
  });

  it('refuses a threshold outside (0, 1] and prompt mode on an image_only image, naming the image and the field at load', () => {
    expect(contextManagementProblems(image({ contextManagement: { thresholdRatio: 0 } }))).toEqual([
      'thresholdRatio must be in (0, 1] (got 0)',
    ]);
    expect(contextManagementProblems(image({ contextManagement: { thresholdRatio: 1 } }))).toEqual([]);
    const plugin = definePlugin({
      name: 'cm',
      version: '0.0.0',
      skills: [],
      tools: [],
      images: [image({ contextManagement: { mode: 'prompt', thresholdRatio: 1.5 } })],
    });
    expect(() => loadPlugins([plugin], [])).toThrow(
      /plugin cm: images\[cm-agent:v0\]\.contextManagement: thresholdRatio must be in \(0, 1\] \(got 1\.5\)/,
    );
    expect(() => loadPlugins([plugin], [])).toThrow(
      /images\[cm-agent:v0\]\.contextManagement: mode prompt is not allowed for an image_only image/,
    );
  });

  it('gives a memory delta a third of the window (half for image_only), at most 8,000 tokens', () => {
    const profile = {
      name: 'p',
      provider: 'script' as const,
      model: 'm',
      context_window: 6000,
      max_tokens: 100,
      parallel_tool_calls: false,
    };
    expect(viewTokenBudgetFor(null)).toBeUndefined();
    expect(viewTokenBudgetFor(profile, image({ promptMode: 'libos_default' }))).toBe(2000);
    expect(viewTokenBudgetFor(profile, image({}))).toBe(3000);
    expect(viewTokenBudgetFor({ ...profile, context_window: 1_000_000 })).toBe(8000);
  });
});
