import type { z } from 'zod';

/** One validation problem as `<path>: <problem>`, e.g. `script.turns[2][0].tool: required`. */
export interface PathIssue {
  readonly path: string;
  readonly problem: string;
}

/** `script` + `['turns', 2, 0, 'tool']` → `script.turns[2][0].tool`; odd keys are quoted: `script.processes["a b"]`. */
export function formatPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** Turns zod issues into `<path>: <problem>` pairs; `input` is the value that was parsed (to tell "missing" from "wrong type"). */
export function describeIssues(root: string, input: unknown, issues: readonly z.core.$ZodIssue[]): PathIssue[] {
  const out: PathIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: formatPath(root, [...issue.path, key]), problem: 'unknown key' });
    } else if (issue.code === 'invalid_type') {
      const value = valueAt(input, issue.path);
      out.push({
        path: formatPath(root, issue.path),
        problem: value === undefined ? 'required' : `must be ${issue.expected} (got ${kindOf(value)})`,
      });
    } else {
      out.push({ path: formatPath(root, issue.path), problem: issue.message });
    }
  }
  return out;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
