import { toolInputJsonSchema, type AnyTool } from '@libos/sdk';
import fc from 'fast-check';

/**
 * fast-check arbitraries of valid-shaped values for the JSON Schemas zod 4 generates (`z.toJSONSchema`, which is
 * how the kernel shows a tool's input to a model). No maintained zod-4 package exists for this (`zod-fast-check`
 * targets zod 3), and the subset zod emits for tool inputs is small: `type` (or a list of types), `enum`, `const`,
 * `anyOf`, local `$ref`s into `$defs` (recursive JSON values), `properties`/`required`/`additionalProperties`,
 * `propertyNames`, string length and `pattern`, numeric bounds, array bounds. A keyword outside it is ignored, and
 * a schema with no type is any JSON value.
 *
 * "Valid-shaped" is the JSON Schema's view: refinements zod cannot express in JSON Schema are not known here.
 */

export type JsonSchema = Readonly<Record<string, unknown>>;

/** Offers a value seen before (an id, a name) for a string at property `key`; `accept` checks its bounds. */
export type KnownStrings = (key: string, index: number, accept: (s: string) => boolean) => string | undefined;

export interface SchemaArbitraryOptions {
  /** Where strings come from besides generation: the fuzzer's pool of ids and names seen in results. */
  readonly known?: KnownStrings;
  /** How many containers (and `$ref`s) deep generated values go; deeper alternatives are left out (default 3). */
  readonly maxDepth?: number;
  /** Longest generated string where the schema sets no smaller bound (default 24). */
  readonly maxStringLength?: number;
}

const INT32 = 2 ** 31 - 1;

/** A string that is not plain ASCII: any code point, or a lone surrogate now and then. */
const unicodeUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
);

/** Any JSON scalar. */
const scalar = fc.oneof(fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));

function asSchema(v: unknown): JsonSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonSchema) : {};
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

class Builder {
  readonly #root: JsonSchema;
  readonly #known: KnownStrings | undefined;
  readonly #maxDepth: number;
  readonly #maxString: number;

  constructor(root: JsonSchema, opts: SchemaArbitraryOptions) {
    this.#root = root;
    this.#known = opts.known;
    this.#maxDepth = opts.maxDepth ?? 3;
    this.#maxString = opts.maxStringLength ?? 24;
  }

  /** The arbitrary of `schema`, found at property `key` (for known strings), `depth` containers down. */
  build(schema: JsonSchema, key: string, depth: number): fc.Arbitrary<unknown> {
    // A field's default is what most callers send: it is drawn as often as everything else together.
    if ('default' in schema) {
      const { default: value, ...rest } = schema;
      return fc.oneof(fc.constant(value), this.build(rest, key, depth));
    }
    if (typeof schema.$ref === 'string') return this.build(this.#resolve(schema.$ref), key, depth + 1);
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as unknown[]));
    if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
      const alts = ((schema.anyOf ?? schema.oneOf) as unknown[]).map(asSchema);
      const shallow = depth >= this.#maxDepth ? alts.filter((a) => !isContainer(a)) : alts;
      return fc.oneof(...(shallow.length > 0 ? shallow : alts).map((a) => this.build(a, key, depth)));
    }
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
    if (types.length === 0) return depth >= this.#maxDepth ? scalar : fc.jsonValue({ maxDepth: 2 });
    return fc.oneof(...types.map((t) => this.#typed(t, schema, key, depth)));
  }

  #resolve(ref: string): JsonSchema {
    const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
    if (!m) throw new Error(`schema-arbitrary: unsupported $ref ${ref}`);
    return asSchema(asSchema(this.#root[m[1]!])[m[2]!]);
  }

  #typed(type: string, schema: JsonSchema, key: string, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'string':
        return this.#string(schema, key);
      case 'integer':
        return integerIn(num(schema.minimum) ?? -INT32, num(schema.maximum) ?? INT32);
      case 'number':
        return fc.double({ min: num(schema.minimum) ?? -1e9, max: num(schema.maximum) ?? 1e9, noNaN: true, noDefaultInfinity: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return this.#array(schema, key, depth);
      case 'object':
        return this.#object(schema, depth);
      default:
        throw new Error(`schema-arbitrary: unsupported type ${type}`);
    }
  }

  #string(schema: JsonSchema, key: string): fc.Arbitrary<string> {
    const min = num(schema.minLength) ?? 0;
    const max = num(schema.maxLength) ?? Number.MAX_SAFE_INTEGER;
    const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : null;
    const accept = (s: string) => s.length >= min && s.length <= max && (!pattern || pattern.test(s));
    const top = Math.max(min, Math.min(max, this.#maxString));
    const generated = pattern
      ? fc.stringMatching(pattern).filter(accept)
      : fc.oneof(
          { weight: 4, arbitrary: fc.string({ minLength: min, maxLength: top }) },
          { weight: 1, arbitrary: fc.string({ unit: unicodeUnit, minLength: min, maxLength: top }).filter(accept) },
        );
    const known = this.#known;
    if (!known) return generated;
    // A known value (an id or name seen in a result) makes the call reach past its not-found checks.
    const recalled = fc.tuple(fc.nat(), generated).map(([i, g]) => known(key, i, accept) ?? g);
    return fc.oneof({ weight: 2, arbitrary: generated }, { weight: 3, arbitrary: recalled });
  }

  #array(schema: JsonSchema, key: string, depth: number): fc.Arbitrary<unknown[]> {
    const minLength = num(schema.minItems) ?? 0;
    const maxLength = depth >= this.#maxDepth ? minLength : Math.max(minLength, Math.min(num(schema.maxItems) ?? 4, 4));
    return fc.array(this.build(asSchema(schema.items), key, depth + 1), { minLength, maxLength });
  }

  #object(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const props = asSchema(schema.properties);
    const keys = Object.keys(props);
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    const extra = schema.additionalProperties;
    if (keys.length === 0 && extra !== false && !(depth >= this.#maxDepth)) {
      // A dictionary (`z.record`, or a bare `type: object`): a few string keys of the value schema.
      const typed = typeof extra === 'object' && extra !== null && Object.keys(extra).length > 0;
      const value = typed ? this.build(asSchema(extra), '', depth + 1) : fc.jsonValue({ maxDepth: 1 });
      return fc.dictionary(fc.string({ maxLength: 12 }), value, { maxKeys: 3, noNullPrototype: true });
    }
    if (keys.length === 0) return fc.constant({}).map(() => ({}));
    const model = Object.fromEntries(keys.map((k) => [k, this.build(asSchema(props[k]), k, depth + 1)]));
    return fc.record(model, { requiredKeys: required.filter((k) => keys.includes(k)), noNullPrototype: true });
  }
}

function isContainer(s: JsonSchema): boolean {
  return typeof s.$ref === 'string' || s.type === 'array' || s.type === 'object';
}

/** Any safe integer in `[min, max]` (fc.integer stops at 32 bits). */
function integerIn(min: number, max: number): fc.Arbitrary<number> {
  if (min >= -INT32 && max <= INT32) return fc.integer({ min, max });
  return fc.bigInt({ min: BigInt(Math.ceil(min)), max: BigInt(Math.floor(max)) }).map(Number);
}

/**
 * Valid-shaped values of a JSON Schema.
 *
 * @example
 * fc.sample(arbitraryFromJsonSchema({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] }), 1);
 * // [{ n: 7 }]
 */
export function arbitraryFromJsonSchema(schema: JsonSchema, opts: SchemaArbitraryOptions = {}): fc.Arbitrary<unknown> {
  return new Builder(schema, opts).build(schema, '', 0);
}

/** Valid-shaped arguments of a tool: from the JSON Schema the kernel shows a model (`toolInputJsonSchema`). */
export function toolArgumentsArbitrary(tool: AnyTool, opts: SchemaArbitraryOptions = {}): fc.Arbitrary<Record<string, unknown>> {
  return arbitraryFromJsonSchema(toolInputJsonSchema(tool), opts) as fc.Arbitrary<Record<string, unknown>>;
}
