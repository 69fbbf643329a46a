import { assertJsonBounds, canonicalJson, LibosError, type AnyTool } from '@libos/sdk';
import type { z } from 'zod';

/** Upper bound on the canonical JSON of one call's arguments. */
export const MAX_ARGUMENT_BYTES = 1_048_576;

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length ? issue.path.map(String).join('.') : '(arguments)';
  return `${path}: ${issue.message}`;
}

/**
 * Parses raw arguments against a tool's zod `input`. Throws `invalid_arguments` naming every bad field and the
 * bound (each argument within `JSON_LIMITS`, all of them within MAX_ARGUMENT_BYTES); nothing else runs when this throws.
 */
export function parseArguments(tool: AnyTool, raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new LibosError(
      'invalid_arguments',
      `arguments of ${tool.name} must be a JSON object (got ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw})`,
    );
  }
  // Each argument is held to the shared JSON bounds first (iteratively), so the serialization below cannot overflow.
  for (const [field, value] of Object.entries(raw)) if (value !== undefined) assertJsonBounds(value, field);
  let bytes: number;
  try {
    bytes = Buffer.byteLength(canonicalJson(raw), 'utf8');
  } catch (err) {
    throw new LibosError('invalid_arguments', `arguments of ${tool.name} are not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (bytes > MAX_ARGUMENT_BYTES) {
    throw new LibosError('invalid_arguments', `arguments of ${tool.name} are ${bytes} bytes; at most ${MAX_ARGUMENT_BYTES} are accepted`, {
      details: { bytes, max: MAX_ARGUMENT_BYTES },
    });
  }
  const r = (tool.input as z.ZodType).safeParse(raw);
  if (!r.success) {
    const fields = r.error.issues.map((i) => (i.path.length ? i.path.map(String).join('.') : '(arguments)'));
    throw new LibosError('invalid_arguments', `invalid arguments for ${tool.name}: ${r.error.issues.map(describeIssue).join('; ')}`, {
      details: { fields, issues: r.error.issues.map((i) => ({ path: i.path.map(String), message: i.message, code: i.code })) },
    });
  }
  return r.data;
}
