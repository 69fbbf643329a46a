import { parseSkill, skillFromFile } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { tasks } from './plugin.js';
import { OBJECT_TASKS_SKILL_URL } from './skill-files.js';

const SIX = [
  'start_object_task',
  'get_object_task',
  'list_object_tasks',
  'wait_object_task',
  'watch_object_task_owner',
  'cancel_object_task',
];

describe('the ObjectTasks plugin', () => {
  it('[OT-59] ships the agent-libos-object-tasks Skill naming exactly the six tools it defines', () => {
    const parsed = parseSkill(skillFromFile(OBJECT_TASKS_SKILL_URL));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.skill.name).toBe('agent-libos-object-tasks');
    expect(parsed.skill.allowedTools).toEqual(SIX);
    const plugin = tasks();
    expect(plugin.tools.map((t) => t.name)).toEqual(SIX);
    expect(plugin.skills).toHaveLength(1);
    // The runner observer and the owner pins: services, never tools.
    expect(Object.keys(plugin.services ?? {})).toEqual(['object_tasks', 'object_pins']);
    for (const t of plugin.tools) expect(t.name).not.toMatch(/publish|claim|lease|heartbeat/);
  });

  it('refuses limits that make no sense', () => {
    expect(() => tasks({ limits: { maxActive: 0 } })).toThrow(/maxActive/);
    expect(() => tasks({ limits: { maxActive: 2, maxActivePerOwner: 3 } })).toThrow(/maxActivePerOwner/);
    expect(() => tasks({ limits: { maxWaitSeconds: Number.NaN } })).toThrow(/maxWaitSeconds/);
    expect(() => tasks({ limits: { maxActive: 1, maxActivePerOwner: 1 } })).not.toThrow();
  });
});
