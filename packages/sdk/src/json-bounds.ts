import { LibosError } from './errors.js';

/**
 * The bounds every JSON value that enters libOS is held to, whoever sends it (a model's tool call, the host's
 * `rt.call`/`rt.sendMessage`, a REST body, a CLI argument): at most `depth` nested arrays/objects and at most
 * `nodes` values in all. Checked without recursion, so no input can overflow the stack.
 */
export const JSON_LIMITS = Object.freeze({ depth: 100, nodes: 100_000 });

export interface JsonBounds {
  /** Most nested arrays/objects (a scalar is depth 0, `[1]` depth 1). Default `JSON_LIMITS.depth`. */
  readonly maxDepth?: number;
  /** Most values in all, containers and scalars. Default `JSON_LIMITS.nodes`. */
  readonly maxNodes?: number;
  /** Most UTF-8 bytes of its JSON text; unchecked when omitted. */
  readonly maxBytes?: number;
}

function describe(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'object' && v !== null) return `an instance of ${Object.getPrototypeOf(v)?.constructor?.name ?? 'unknown'}`;
  return typeof v;
}

const refuse = (field: string, message: string, details: Record<string, unknown>) =>
  new LibosError('invalid_arguments', `${field}: ${message}`, { details: { field, ...details } });

/**
 * Throws `invalid_arguments` naming `field` and the bound unless `value` is finite JSON (plain objects, arrays,
 * strings, finite numbers, booleans, null; an `undefined` object property is skipped, as JSON.stringify does)
 * within the bounds. Iterative: a value nested 100,000 deep is refused, never a stack overflow. A cyclic value
 * is refused as too deep.
 *
 * @example
 * assertJsonBounds({ order: 42 }, 'payload');                  // ok
 * const deeplyNested = JSON.parse(`${'['.repeat(101)}${']'.repeat(101)}`);
 * assertJsonBounds(deeplyNested, 'payload');                   // invalid_arguments: payload: nested deeper than 100 levels
 * assertJsonBounds(args, 'arguments', { maxBytes: 1_048_576 }); // also bounds its JSON text
 */
export function assertJsonBounds(value: unknown, field: string, bounds: JsonBounds = {}): void {
  const maxDepth = bounds.maxDepth ?? JSON_LIMITS.depth;
  const maxNodes = bounds.maxNodes ?? JSON_LIMITS.nodes;
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (++nodes > maxNodes) {
      throw refuse(field, `has more than ${maxNodes} JSON values (at most ${maxNodes} are accepted)`, { limit: 'nodes', max: maxNodes });
    }
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw refuse(field, `${v} is not a finite number, so not JSON`, { limit: 'json' });
      continue;
    }
    if (typeof v !== 'object') throw refuse(field, `${describe(v)} is not JSON`, { limit: 'json' });
    if (depth >= maxDepth) {
      throw refuse(field, `nested deeper than ${maxDepth} levels (at most ${maxDepth} nested arrays/objects are accepted)`, {
        limit: 'depth',
        max: maxDepth,
      });
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], depth: depth + 1 });
      continue;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) throw refuse(field, `${describe(v)} is not a plain JSON object`, { limit: 'json' });
    for (const key of Object.keys(v)) {
      const item = (v as Record<string, unknown>)[key];
      if (item !== undefined) stack.push({ v: item, depth: depth + 1 });
    }
  }
  if (bounds.maxBytes !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');
    if (bytes > bounds.maxBytes) {
      throw refuse(field, `is ${bytes} bytes of JSON; at most ${bounds.maxBytes} are accepted`, {
        limit: 'bytes',
        bytes,
        max: bounds.maxBytes,
      });
    }
  }
}
