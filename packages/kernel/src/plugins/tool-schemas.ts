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

const listedLengths = new WeakMap<AnyTool, { readonly name: string; readonly description: string; readonly length: number }>();

/**
 * The length of the tool's entry as a prompt lists it, `JSON.stringify({ name, description, parameters })`, measured
 * once per tool (its schema is frozen, its name and description are checked): a turn's size estimate adds these up
 * instead of serialising every visible tool's schema again.
 *
 * @example
 * declare const tool: AnyTool;
 * listedToolLength('get_current_time', tool); // === JSON.stringify({ name: 'get_current_time', description, parameters }).length
 */
export function listedToolLength(name: string, tool: AnyTool): number {
  const hit = listedLengths.get(tool);
  if (hit && hit.name === name && hit.description === tool.description) return hit.length;
  const length = JSON.stringify({ name, description: tool.description, parameters: toolJsonSchema(tool) }).length;
  listedLengths.set(tool, { name, description: tool.description, length });
  return length;
}
