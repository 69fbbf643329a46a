import fc from 'fast-check';

/**
 * Hostile argument values for fuzzing tool calls: very long strings, deep nesting (100..10,000 levels), unicode
 * edge cases (lone surrogates, NUL, bidi controls), `__proto__`/`constructor` keys, number-like strings, huge
 * numbers, and the wrong container for the field. `hostileArguments` mixes them into valid-shaped arguments.
 *
 * Every value is JSON unless `jsOnly` is set (then NaN, Infinity, undefined and -0 appear too: what an in-process
 * host could pass to the broker, which must refuse them as arguments that are not JSON).
 */

/** The key a pollution attempt writes: the fuzz suite checks that no prototype ever gains it. */
export const POLLUTION_MARKER = 'libos_fuzz_polluted';

/** `{ [key]: value }` with `key` as an own enumerable property, even for `__proto__` (which `=` would not create). */
export function ownKeyObject(key: string, value: unknown): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  return o;
}

/** A copy of `obj` with `key` set as an own property (works for `__proto__`). */
export function withOwnKey(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const out = { ...obj };
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

/** `depth` nested arrays or objects around a leaf, built without recursion. */
export function nested(depth: number, shape: 'array' | 'object' | 'mixed', leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = shape === 'array' || (shape === 'mixed' && i % 2 === 0) ? [v] : { a: v };
  return v;
}

const polluter = (): unknown =>
  JSON.parse(`{"__proto__":{"${POLLUTION_MARKER}":true},"constructor":{"prototype":{"${POLLUTION_MARKER}":true}}}`);

const strangeStrings = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\udc00\ud800',
  '\u202e\u2066evil\u2069',
  '\u200b\u200d\ufeff',
  '𝕃𝕚𝕓𝕆𝕊 🐱‍👤 e\u0301',
  '\r\n\t\u000b\u001f\u007f',
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '1e309',
  '0x1F',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '../../../../etc/passwd',
  '/',
  '//',
  '*',
  'object:*',
  'process:spawn',
  "' OR 1=1 --",
  '"; DROP TABLE processes; --',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile value that looks like a template.
  '${process.exit()}',
  '%00%ff',
  'pid_0000000000000000',
  'obj_0000000000000000',
  'human:owner',
  'A'.repeat(65),
  'é'.repeat(2049),
];

const hugeNumbers = [
  0,
  -0.5,
  -1,
  1.5,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  1e21,
  1e-7,
];
const jsOnlyValues = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, undefined];

export interface HostileOptions {
  /** Also values that are not JSON (an in-process host's mistakes). */
  readonly jsOnly?: boolean;
  /** Deepest nesting generated (default 10,000). */
  readonly maxDepth?: number;
}

/** One hostile value. */
export function hostileValue(opts: HostileOptions = {}): fc.Arbitrary<unknown> {
  // Past every bound (tool fields, 1 MiB of arguments, the REST body limit) now and then; mostly just long.
  const long = fc
    .tuple(
      fc.constantFrom('x', '\ud800', '🐱', 'é', '\u0000'),
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(1_000, 10_000, 33_000, 70_000) },
        { weight: 1, arbitrary: fc.constantFrom(300_000, 1_100_000) },
      ),
    )
    .map(([unit, n]) => unit.repeat(n));
  const depth = fc.integer({ min: 100, max: Math.max(100, opts.maxDepth ?? 10_000) });
  const deep = fc.tuple(depth, fc.constantFrom('array' as const, 'object' as const, 'mixed' as const)).map(([d, s]) => nested(d, s));
  const wide = fc.oneof(
    fc.constantFrom(1_001, 20_000).map((n) => Array.from({ length: n }, (_, i) => i)),
    fc.constant(3_000).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
  );
  const wrongShape = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.constant([]),
    fc.constant({}).map(() => ({})),
    fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constant(null).map(() => polluter()),
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...strangeStrings) },
    { weight: 3, arbitrary: fc.constantFrom(...hugeNumbers) },
    { weight: 2, arbitrary: long },
    { weight: 2, arbitrary: deep },
    { weight: 1, arbitrary: wide },
    { weight: 4, arbitrary: wrongShape },
    ...(opts.jsOnly ? [{ weight: 1, arbitrary: fc.constantFrom(...jsOnlyValues) }] : []),
  );
}

/**
 * A copy of `value` with the container member at `path` (indexes into arrays, keys into objects) set to `leaf`;
 * every container on the way is copied, own `__proto__` keys included.
 */
export function withAt(value: unknown, path: readonly (string | number)[], leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((x, i) => (i === head ? withAt(x, rest, leaf) : x));
  const obj = value as Record<string, unknown>;
  return withOwnKey(obj, String(head), withAt(obj[String(head)], rest, leaf));
}

/** Paths of the members inside `value` (arrays and objects), shallowest first, at most `max` of them. */
export function memberPaths(value: unknown, max = 64): (string | number)[][] {
  const out: (string | number)[][] = [];
  const queue: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (queue.length > 0 && out.length < max) {
    const { v, path } = queue.shift()!;
    if (typeof v !== 'object' || v === null) continue;
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (const [k, x] of entries) {
      out.push([...path, k]);
      queue.push({ v: x, path: [...path, k] });
    }
  }
  return out.slice(0, max);
}

const specialKeys = ['__proto__', 'constructor', 'prototype', 'toString', '', ' ', '\ud800', 'a.b', '$ref', 'x'.repeat(300)];

/**
 * Arguments for a tool: `valid` (schema-driven) with one field (a schema key or a special key) or one member deeper
 * inside set to a hostile value, with a field dropped, with pollution keys, or replaced whole by a hostile value.
 */
export function hostileArguments(
  valid: fc.Arbitrary<Record<string, unknown>>,
  schemaKeys: readonly string[],
  opts: HostileOptions = {},
): fc.Arbitrary<unknown> {
  const hostile = hostileValue(opts);
  const special = fc.constantFrom(...specialKeys);
  const schemaKey = schemaKeys.length === 0 ? special : fc.constantFrom(...schemaKeys);
  const key = fc.oneof({ weight: 3, arbitrary: schemaKey }, { weight: 1, arbitrary: special });
  const setField = fc.tuple(valid, key, hostile).map(([args, k, v]) => withOwnKey(args, k, v));
  const setTwo = fc.tuple(valid, key, hostile, key, hostile).map(([args, k1, v1, k2, v2]) => withOwnKey(withOwnKey(args, k1, v1), k2, v2));
  const dropField = fc.tuple(valid, fc.nat()).map(([args, i]) => {
    const keys = Object.keys(args);
    if (keys.length === 0) return args;
    const { [keys[i % keys.length]!]: _dropped, ...rest } = args;
    return rest;
  });
  // Deeper than the top level: a member of a nested object or array (a check, an item, a spec) turns hostile.
  const setInside = fc.tuple(valid, fc.nat(), hostile).map(([args, i, v]) => {
    const paths = memberPaths(args).filter((p) => p.length > 1);
    return paths.length === 0 ? withOwnKey(args, '__proto__', v) : withAt(args, paths[i % paths.length]!, v);
  });
  const polluted = valid.map((args) => ({ ...args, ...(polluter() as Record<string, unknown>) }));
  return fc.oneof(
    { weight: 6, arbitrary: setField },
    { weight: 3, arbitrary: setInside },
    { weight: 2, arbitrary: setTwo },
    { weight: 1, arbitrary: dropField },
    { weight: 1, arbitrary: polluted },
    { weight: 1, arbitrary: hostile },
  );
}
