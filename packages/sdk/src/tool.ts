import { z } from 'zod';
import type { ToolContext } from './context.js';

/** Tool names: lower_snake, 1..64 chars. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export interface ToolPolicy {
  /** The tool changes state outside its transaction (files, network, timers). */
  readonly sideEffects?: boolean;
  readonly idempotent?: boolean;
  readonly timeoutMs?: number;
}

/**
 * A tool is data plus one function. The JSON Schema a model sees is generated from `input`.
 */
export interface ToolDefinition<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly input: I;
  readonly output?: O;
  /** Must be the only call in its turn (later calls in a batch are skipped). */
  readonly exclusive?: boolean;
  /**
   * Input keys the runtime alone passes (e.g. a resumed call's saved state): they stay in `input` for validation but
   * are removed from the JSON Schema a model is shown. The tool must still refuse them on a call it did not expect.
   */
  readonly hiddenInputs?: readonly string[];
  readonly policy?: ToolPolicy;
  run(args: z.output<I>, ctx: ToolContext): Promise<z.input<O>> | z.input<O>;
}

/** Any tool, whatever its schemas. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;

/**
 * Defines a tool. Validates the name and that `input` is an object schema.
 *
 * @example
 * export const echo = defineTool({
 *   name: 'echo',
 *   description: 'Returns its text.',
 *   input: z.object({ text: z.string().max(100) }),
 *   output: z.object({ text: z.string() }),
 *   run: ({ text }) => ({ text }),
 * });
 */
export function defineTool<I extends z.ZodType, O extends z.ZodType = z.ZodType>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  if (!TOOL_NAME_PATTERN.test(def.name))
    throw new TypeError(`defineTool: name ${JSON.stringify(def.name)} must match ${TOOL_NAME_PATTERN}`);
  if (typeof def.description !== 'string' || def.description.trim() === '')
    throw new TypeError(`defineTool(${def.name}): description is required`);
  if (!(def.input instanceof z.ZodObject)) throw new TypeError(`defineTool(${def.name}): input must be a z.object schema`);
  return Object.freeze({ ...def });
}

/**
 * The JSON Schema a model sees for a tool's arguments, generated from its zod `input`.
 *
 * @example
 * declare const echo: AnyTool; // defined as in defineTool's example
 * toolInputJsonSchema(echo); // { type: 'object', properties: { text: { type: 'string', maxLength: 100 } }, ... }
 */
export function toolInputJsonSchema(tool: AnyTool): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  const hidden = new Set(tool.hiddenInputs ?? []);
  if (hidden.size > 0) {
    const props = schema.properties as Record<string, unknown> | undefined;
    if (props) for (const key of hidden) delete props[key];
    if (Array.isArray(schema.required)) schema.required = (schema.required as string[]).filter((k) => !hidden.has(k));
  }
  return schema;
}
