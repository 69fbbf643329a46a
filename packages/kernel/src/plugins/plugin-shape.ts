import type { SkillProblem } from '@libos/sdk';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const OPTIONAL_ARRAYS = ['migrations', 'images', 'owners'] as const;
const OPTIONAL_OBJECTS = ['services', 'hooks', 'errorCodes'] as const;

/**
 * What is wrong with the shape of a value handed over as a plugin (a plain-JS plugin, or one built without
 * `definePlugin`): each problem names the plugin and the field, so the loader reports it as `plugin_invalid` instead
 * of failing on the first missing array. An empty list means every field the loader reads has its type.
 *
 * @example
 * pluginShapeProblems({ name: 'weather', version: '1.0.0', skills: [] }, 0);
 * // [{ file: 'plugin weather', field: 'tools', message: 'must be an array of tool definitions (got undefined)' }]
 */
export function pluginShapeProblems(value: unknown, index: number): SkillProblem[] {
  if (!isObject(value)) return [{ file: `plugins[${index}]`, field: '(plugin)', message: `must be a plugin object (got ${kind(value)})` }];
  const named = typeof value.name === 'string' && value.name.trim() !== '';
  const file = named ? `plugin ${value.name as string}` : `plugins[${index}]`;
  const problems: SkillProblem[] = [];
  const bad = (field: string, message: string) => problems.push({ file, field, message });
  if (!named) bad('name', `must be a non-empty string (got ${kind(value.name)})`);
  if (!Array.isArray(value.skills)) bad('skills', `must be an array of Skill sources (got ${kind(value.skills)})`);
  if (!Array.isArray(value.tools)) bad('tools', `must be an array of tool definitions (got ${kind(value.tools)})`);
  else
    value.tools.forEach((t: unknown, i) => {
      if (!isObject(t)) bad(`tools[${i}]`, `must be a tool definition (got ${kind(t)})`);
      else if (typeof t.name !== 'string') bad(`tools[${i}].name`, `must be a string (got ${kind(t.name)})`);
      else if (typeof t.run !== 'function') bad(`tools[${i}].run`, `must be a function (got ${kind(t.run)})`);
      else if (!isObject(t.input) || typeof t.input.safeParse !== 'function')
        bad(`tools[${i}].input`, 'must be a zod object schema (defineTool checks it)');
    });
  for (const f of OPTIONAL_ARRAYS)
    if (value[f] !== undefined && !Array.isArray(value[f])) bad(f, `must be an array when given (got ${kind(value[f])})`);
  for (const f of OPTIONAL_OBJECTS)
    if (value[f] !== undefined && !isObject(value[f])) bad(f, `must be an object when given (got ${kind(value[f])})`);
  return problems;
}

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : typeof v;
}
