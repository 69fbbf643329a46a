import { defineTool, toolInputJsonSchema, z } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { toolJsonSchema } from './tool-schemas.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echo.',
  input: z.object({ text: z.string().max(100), n: z.number().int().default(1) }),
  run: async (a) => a,
});

describe('tool JSON Schemas', () => {
  it('are generated once per tool, equal to the zod-derived schema, and frozen all the way down', () => {
    const first = toolJsonSchema(echo);
    expect(first).toEqual(toolInputJsonSchema(echo));
    expect(toolJsonSchema(echo)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.properties)).toBe(true);
    expect(() => {
      (first.properties as Record<string, unknown>).text = {};
    }).toThrow(TypeError);
  });
});
