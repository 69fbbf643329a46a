import { LibosError, type ErrorCode } from '@libos/sdk';

/** A JSON value as Object Memory stores it. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Deepest nesting a payload or entry may have (guards recursion; JSON parsers share this kind of limit). */
export const MAX_JSON_DEPTH = 1_000;

/** Why a value is not finite JSON, with the JSON pointer where it failed. */
export interface JsonProblem {
  readonly pointer: string;
  readonly reason: string;
}

const escapeToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'object' && value !== null) return `an instance of ${Object.getPrototypeOf(value)?.constructor?.name ?? 'unknown'}`;
  return typeof value;
}

/**
 * Validates that `value` is finite JSON (plain objects, dense arrays, strings, finite numbers, booleans, null,
 * no cycles, nesting ≤ maxDepth) and returns a deep copy, or the first problem found.
 *
 * @example
 * copyJson({ a: [1, 2] }); // { ok: true, value: { a: [1, 2] } }
 * copyJson({ a: NaN });    // { ok: false, problem: { pointer: '/a', reason: 'NaN is not a finite number' } }
 */
export function copyJson(value: unknown, maxDepth = MAX_JSON_DEPTH): { ok: true; value: JsonValue } | { ok: false; problem: JsonProblem } {
  const ancestors = new Set<object>();
  let problem: JsonProblem | null = null;
  const fail = (pointer: string, reason: string): undefined => {
    problem = { pointer, reason };
    return undefined;
  };
  const walk = (v: unknown, pointer: string, depth: number): JsonValue | undefined => {
    if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : fail(pointer, `${v} is not a finite number`);
    if (typeof v !== 'object') return fail(pointer, `${describe(v)} is not JSON`);
    if (depth >= maxDepth) return fail(pointer, `nesting deeper than ${maxDepth} levels`);
    if (ancestors.has(v)) return fail(pointer, 'the value is cyclic');
    ancestors.add(v);
    try {
      if (Array.isArray(v)) {
        const out: JsonValue[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) return fail(`${pointer}/${i}`, 'sparse array hole is not JSON');
          const item = walk(v[i], `${pointer}/${i}`, depth + 1);
          if (item === undefined) return undefined;
          out[i] = item;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return fail(pointer, `${describe(v)} is not a plain JSON object`);
      const out: Record<string, JsonValue> = {};
      for (const key of Object.keys(v)) {
        const item = walk((v as Record<string, unknown>)[key], `${pointer}/${escapeToken(key)}`, depth + 1);
        if (item === undefined) return undefined;
        // defineProperty: a "__proto__" key stays an own data property instead of changing the prototype.
        Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
      }
      return out;
    } finally {
      ancestors.delete(v);
    }
  };
  const out = walk(value, '', 0);
  if (out === undefined) return { ok: false, problem: problem ?? { pointer: '', reason: 'not JSON' } };
  return { ok: true, value: out };
}

/**
 * Copies `value` as JSON or throws a LibosError naming the field.
 *
 * @example
 * const entry = requireJson(args.entry, 'entry'); // throws payload_not_json for NaN, cycles, class instances
 */
export function requireJson(value: unknown, field: string, code: ErrorCode = 'payload_not_json'): JsonValue {
  const r = copyJson(value);
  if (r.ok) return r.value;
  const at = r.problem.pointer === '' ? '' : ` at ${r.problem.pointer}`;
  throw new LibosError(code, `${field}: must be finite JSON${at}: ${r.problem.reason}`, { details: { field, pointer: r.problem.pointer } });
}

/** The JSON kind of a value: object, array, string, number, boolean or null. */
export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

export function jsonKind(value: JsonValue): JsonKind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as JsonKind;
}

/** True for a JSON object (not an array, not null). */
export function isJsonObject(value: JsonValue): value is { readonly [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Number of Unicode code points in a string (what the spec calls "chars"). */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
