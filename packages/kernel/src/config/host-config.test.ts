import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LibosError } from '@libos/sdk';
import { loadHostConfig, parseHostConfig, resolveLlmProfile } from './host-config.js';

const profile = { provider: 'openai', model: 'gpt-4o-mini', context_window: 4000, max_tokens: 512 };

function problem(value: unknown): { message: string; paths: string[]; code: string } {
  try {
    parseHostConfig(value, 'host config test.json');
  } catch (err) {
    const e = err as LibosError;
    return { message: e.message, code: e.code, paths: ((e.details?.problems ?? []) as { path: string }[]).map((p) => p.path) };
  }
  throw new Error('the config was accepted');
}

describe('parseHostConfig', () => {
  it('fills every default into an empty config', () => {
    const defaults = {
      timezone: 'UTC',
      sleep: { max_seconds: 60 },
      llm_context: { policy: 'source_only' },
      llm_profiles: {},
      mcp_servers: {},
      plugins: [],
    };
    expect(parseHostConfig({})).toEqual(defaults);
  });

  it('keeps what is given and defaults parallel_tool_calls to false', () => {
    const c = parseHostConfig({
      timezone: 'Asia/Shanghai',
      sleep: { max_seconds: 5 },
      llm_profiles: { small: profile },
      default_profile: 'small',
    });
    expect(c.timezone).toBe('Asia/Shanghai');
    expect(c.sleep.max_seconds).toBe(5);
    expect(c.llm_profiles.small).toEqual({ ...profile, parallel_tool_calls: false });
    expect(resolveLlmProfile(c)).toEqual({ name: 'small', ...profile, parallel_tool_calls: false });
  });

  it('names an unknown key by its path, at any depth', () => {
    expect(problem({ timezon: 'UTC' })).toMatchObject({ code: 'invalid_arguments', paths: ['timezon'] });
    const deep = problem({ llm_profiles: { fast: { ...profile, temperature: 0 } } });
    expect(deep.paths).toEqual(['llm_profiles.fast.temperature']);
    expect(deep.message).toContain('llm_profiles.fast.temperature: unknown key');
  });

  it('names a negative or fractional window, and a reply budget that does not fit in it', () => {
    expect(problem({ llm_profiles: { fast: { ...profile, context_window: -4000 } } }).message).toContain(
      'llm_profiles.fast.context_window: must be a positive integer',
    );
    expect(problem({ llm_profiles: { fast: { ...profile, context_window: 10.5 } } }).paths).toEqual(['llm_profiles.fast.context_window']);
    expect(problem({ llm_profiles: { fast: { ...profile, max_tokens: 4000 } } }).message).toContain(
      'llm_profiles.fast.max_tokens: must be less than context_window (4000)',
    );
  });

  it('rejects a timezone that is not IANA, a bad policy, a bad sleep maximum and a dangling default_profile', () => {
    expect(problem({ timezone: 'Mars/Olympus' }).message).toContain('timezone: must be an IANA timezone name');
    expect(problem({ llm_context: { policy: 'everything' } }).paths).toEqual(['llm_context.policy']);
    expect(problem({ sleep: { max_seconds: 0 } }).message).toContain('sleep.max_seconds: must be a positive number');
    expect(problem({ default_profile: 'nope' }).message).toContain('default_profile: names no profile in llm_profiles');
  });

  it('reports every problem at once', () => {
    expect(problem({ timezone: 'Nowhere/Land', extra: 1, llm_profiles: { a: { ...profile, provider: 'acme' } } }).paths.sort()).toEqual([
      'extra',
      'llm_profiles.a.provider',
      'timezone',
    ]);
  });

  it('an unknown profile name lists the configured ones', () => {
    const c = parseHostConfig({ llm_profiles: { small: profile } });
    expect(() => resolveLlmProfile(c, 'big')).toThrow(/no llm profile named "big" \(configured: small\)/);
    expect(resolveLlmProfile(c)).toBeNull();
  });
});

describe('loadHostConfig', () => {
  it('finds libos.config.yaml in a folder, and defaults when the folder has none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-config-'));
    expect(loadHostConfig(dir)).toEqual({ config: parseHostConfig({}), path: null });
    writeFileSync(join(dir, 'libos.config.yaml'), 'timezone: Asia/Shanghai\nsleep:\n  max_seconds: 5\n');
    const loaded = loadHostConfig(dir);
    expect(loaded.path).toBe(join(dir, 'libos.config.yaml'));
    expect(loaded.config.sleep.max_seconds).toBe(5);
  });

  it('refuses two config files in one folder, a missing file, and text that does not parse', () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-config-'));
    writeFileSync(join(dir, 'libos.config.yaml'), '{}\n');
    writeFileSync(join(dir, 'libos.config.json'), '{}\n');
    expect(() => loadHostConfig(dir)).toThrow(/holds 2 config files/);
    expect(() => loadHostConfig(join(dir, 'absent.json'))).toThrow(expect.objectContaining({ code: 'not_found' }));
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{ "timezone": ');
    const notJson = expect.objectContaining({ code: 'invalid_arguments', message: expect.stringContaining('not valid JSON') });
    expect(() => loadHostConfig(broken)).toThrow(notJson);
  });

  it('names the file in a key error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-config-'));
    const file = join(dir, 'libos.config.json');
    writeFileSync(file, JSON.stringify({ llm_profiles: { fast: { ...profile, context_window: -1 } } }));
    expect(() => loadHostConfig(file)).toThrow(`host config ${file}: llm_profiles.fast.context_window: must be a positive integer`);
  });
});
