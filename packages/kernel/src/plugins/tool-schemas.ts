import { toolInputJsonSchema, type AnyTool } from '@libos/sdk';

const cache = new WeakMap<AnyTool, Record<string, unknown>>();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * The JSON Schema a model is shown for a tool's input, generated from its zod `input` once per tool (a tool is
 * immutable once loaded) and frozen, so every turn shares it and nobody can change it for the others.
 */
export function toolJsonSchema(tool: AnyTool): Record<string, unknown> {
  let schema = cache.get(tool);
  if (!schema) {
    schema = deepFreeze(toolInputJsonSchema(tool));
    cache.set(tool, schema);
  }
  return schema;
}
