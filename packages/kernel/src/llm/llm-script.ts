import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { LibosError } from '@libos/sdk';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { describeIssues } from './internal/issue-path.js';

/**
 * A script for the `ScriptedProvider`. A turn is the list of tool calls one `completeAction` returns.
 *
 * - an array of turns, or `{ turns: [...] }`: one shared queue, consumed in order by every call whatever its pid;
 * - `{ processes: { "<pid>": [...turns], "*": [...turns] }, images?: { "<image id>": [...turns] } }`: one queue per
 *   pid; a pid without its own key gets its own fresh copy of its image's turns when `images` names its image (so a
 *   script can play every `context-compressor:v0` child), else of the `"*"` turns (a call without a pid uses `"*"`).
 *
 * @example
 * const shared: LlmScript = [[{ tool: 'list_objects' }], [{ tool: 'process_exit', args: { message: 'ok' } }]];
 * const perPid: LlmScript = { processes: { pid_0123456789abcdef: [[{ tool: 'wait_child' }]], '*': [] } };
 * const compressor: LlmScript = {
 *   processes: {},
 *   images: { 'context-compressor:v0': [[{ tool: 'process_exit', args: { payload: { summary: 'what was done' } } }]] },
 * };
 */
export type LlmScript =
  | ScriptedTurn[]
  | { turns: ScriptedTurn[] }
  | { processes: Record<string, ScriptedTurn[]>; images?: Record<string, ScriptedTurn[]> };

/** The tool calls of one turn; an empty turn is a reply with no tool calls. */
export type ScriptedTurn = ScriptedToolCall[];

/**
 * One scripted tool call.
 *
 * @example
 * const call: ScriptedToolCall = { tool: 'write_object', args: { name: 'notes', payload: { text: 'hi' } } };
 */
export interface ScriptedToolCall {
  tool: string;
  args?: Record<string, unknown>;
}

/** The key of the default queue in a `{ processes }` script. */
export const DEFAULT_SCRIPT_KEY = '*';

const callSchema = z.strictObject({
  tool: z.string().min(1, 'must not be empty'),
  args: z.record(z.string(), z.unknown()).optional(),
});
const turnsSchema = z.array(z.array(callSchema));
const turnsObjectSchema = z.strictObject({ turns: turnsSchema });
const processesSchema = z.strictObject({
  processes: z.record(z.string(), turnsSchema).default({}),
  images: z.record(z.string(), turnsSchema).optional(),
});

/**
 * Validates a script given in code or decoded from a file. Throws `invalid_arguments` naming the bad field,
 * e.g. `script.turns[2][0].tool: required`; `details.issues` lists every problem.
 *
 * @example
 * const script = parseLlmScript(JSON.parse('[[{"tool":"process_exit"}]]'));
 */
export function parseLlmScript(value: unknown, source?: string): LlmScript {
  const schema = Array.isArray(value)
    ? turnsSchema
    : isPlainObject(value) && ('processes' in value || 'images' in value)
      ? processesSchema
      : isPlainObject(value)
        ? turnsObjectSchema
        : undefined;
  if (schema === undefined) {
    throw invalid(source, [{ path: 'script', problem: 'must be an array of turns, { turns: [...] } or { processes: {...} }' }]);
  }
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(source, describeIssues('script', value, result.error.issues));
  return result.data;
}

/**
 * Reads and validates a script file: `.json`, or `.yaml` / `.yml`.
 *
 * @example
 * const script = await loadLlmScriptFile('./demo/script.yaml');
 */
export async function loadLlmScriptFile(path: string): Promise<LlmScript> {
  const ext = extname(path).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml') {
    throw new LibosError('invalid_arguments', `script file ${path}: extension must be .json, .yaml or .yml`, { details: { path } });
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new LibosError('invalid_arguments', `script file ${path}: cannot read: ${messageOf(err)}`, { details: { path }, cause: err });
  }
  let decoded: unknown;
  try {
    decoded = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new LibosError('invalid_arguments', `script file ${path}: not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${messageOf(err)}`, {
      details: { path },
      cause: err,
    });
  }
  return parseLlmScript(decoded, path);
}

function invalid(source: string | undefined, issues: { path: string; problem: string }[]): LibosError {
  const first = issues[0] ?? { path: 'script', problem: 'invalid' };
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  const where = source === undefined ? '' : `script file ${source}: `;
  return new LibosError('invalid_arguments', `${where}${first.path}: ${first.problem}${more}`, {
    details: source === undefined ? { issues } : { path: source, issues },
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
