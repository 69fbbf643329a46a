import { parseSkillOrThrow, toolInputJsonSchema, SERVICE_NAMES } from '@libos/sdk';
import { describe, expect, test } from 'vitest';
import { objectMemory } from './plugin.js';

const FIVE = ['create_memory_namespace', 'list_memory_namespace', 'create_memory_object', 'read_memory_object', 'append_memory_object'];

describe('the object-memory plugin', () => {
  const plugin = objectMemory();

  test('[OM-65] the Skill allows exactly the five tools and the plugin defines no other model tool', () => {
    expect(plugin.skills).toHaveLength(1);
    const skill = parseSkillOrThrow(plugin.skills[0]!);
    expect(skill.name).toBe('agent-libos-object-memory');
    expect([...skill.allowedTools].sort()).toEqual([...FIVE].sort());
    expect(plugin.tools.map((t) => t.name).sort()).toEqual([...FIVE].sort());
    for (const forbidden of ['delete', 'rename', 'update', 'rollback', 'wait', 'view', 'restore']) {
      expect(plugin.tools.some((t) => t.name.includes(forbidden))).toBe(false);
    }
    expect(skill.body).toContain('payload_unavailable_after_reopen');
  });

  test('[OM-73] model-facing schemas state bounds and defaults', () => {
    const byName = Object.fromEntries(
      plugin.tools.map((t) => [
        t.name,
        toolInputJsonSchema(t) as { properties: Record<string, Record<string, unknown>>; required?: string[] },
      ]),
    );
    const limit = byName.list_memory_namespace!.properties.limit!;
    expect(limit.default).toBe(50);
    expect(limit.anyOf).toContainEqual({ type: 'integer', minimum: 1, maximum: 50 });
    const chars = byName.read_memory_object!.properties.max_payload_chars!;
    expect(chars).toMatchObject({ type: 'integer', minimum: 1, maximum: 200_000, default: 12_000 });
    expect(byName.create_memory_object!.properties.immutable).toMatchObject({ type: 'boolean', default: true });
    expect(byName.create_memory_object!.required).toEqual(expect.arrayContaining(['type', 'payload']));
    expect(byName.append_memory_object!.required).toEqual(expect.arrayContaining(['name', 'entry']));
    expect(byName.append_memory_object!.properties.list_field).toMatchObject({ type: 'string', default: 'entries' });
    expect(byName.read_memory_object!.properties.cursor).toMatchObject({ type: 'integer', minimum: 0, default: 0 });
  });

  test('[OM-13] the schema leaves limit range to the tool (limit_out_of_range) but refuses 1.5, true and "5"', () => {
    const list = plugin.tools.find((t) => t.name === 'list_memory_namespace')!;
    for (const ok of [{}, { limit: null }, { limit: 0 }, { limit: 51 }, { limit: -1 }])
      expect(list.input.safeParse(ok).success, JSON.stringify(ok)).toBe(true);
    for (const bad of [{ limit: 1.5 }, { limit: true }, { limit: '5' }])
      expect(list.input.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });

  test('[OM-42] max_payload_chars 0 or 200,001 fails the schema (invalid_arguments); cursor must be a non-negative integer', () => {
    const read = plugin.tools.find((t) => t.name === 'read_memory_object')!;
    expect(read.input.safeParse({ name: 'n', max_payload_chars: 0 }).success).toBe(false);
    expect(read.input.safeParse({ name: 'n', max_payload_chars: 200_001 }).success).toBe(false);
    expect(read.input.safeParse({ name: 'n', max_payload_chars: 200_000 }).success).toBe(true);
    expect(read.input.safeParse({ name: 'n', cursor: -1 }).success).toBe(false);
  });

  test('[OM-40] expected_sha256 must be 64 lowercase hex characters', () => {
    const read = plugin.tools.find((t) => t.name === 'read_memory_object')!;
    expect(read.input.safeParse({ name: 'n', expected_sha256: 'A'.repeat(64) }).success).toBe(false);
    expect(read.input.safeParse({ name: 'n', expected_sha256: 'a'.repeat(63) }).success).toBe(false);
    expect(read.input.safeParse({ name: 'n', expected_sha256: 'a'.repeat(64) }).success).toBe(true);
  });

  test('[OM-74] create requires type and payload (payload null allowed)', () => {
    const create = plugin.tools.find((t) => t.name === 'create_memory_object')!;
    expect(create.input.safeParse({ payload: 1 }).success).toBe(false);
    expect(create.input.safeParse({ type: 'plan' }).success).toBe(false);
    expect(create.input.safeParse({ type: 'plan', payload: null }).success).toBe(true);
  });

  test('it registers the objects service and migrations, no open hook (a lazy sweep); each instance has its own payload store', () => {
    expect(typeof plugin.services?.[SERVICE_NAMES.objects]).toBe('function');
    expect(plugin.migrations?.length).toBeGreaterThan(0);
    expect(plugin.hooks?.open).toBeUndefined();
    const other = objectMemory();
    plugin.payloadStore.set('obj_0123456789abcdef', 1);
    expect(other.payloadStore.has('obj_0123456789abcdef')).toBe(false);
  });
});
