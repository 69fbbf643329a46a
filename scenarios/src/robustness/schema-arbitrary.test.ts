import { capabilities } from '@libos/capabilities';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { z } from '@libos/sdk';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arbitraryFromJsonSchema, toolArgumentsArbitrary } from './schema-arbitrary.js';

const depthOf = (v: unknown): number =>
  typeof v === 'object' && v !== null ? 1 + Math.max(0, ...(Array.isArray(v) ? v : Object.values(v)).map(depthOf)) : 0;

describe('schema-arbitrary: fast-check values from the JSON Schema zod 4 generates', () => {
  it('valid-shaped arguments of every tool of every loaded plugin parse with its zod input, refinements aside', async () => {
    const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), tasks(), session()] });
    try {
      const misfits: string[] = [];
      let accepted = 0;
      const names = rt.toolNames();
      for (const name of names) {
        const tool = rt.toolDefinition(name)!;
        for (const args of fc.sample(toolArgumentsArbitrary(tool), { seed: 7, numRuns: 60 })) {
          const r = (tool.input as z.ZodType).safeParse(args);
          if (r.success) accepted += 1;
          // A refinement (non-blank, no NUL, ...) is a check JSON Schema cannot carry: only those may refuse.
          else if (r.error.issues.some((i) => i.code !== 'custom')) {
            misfits.push(`${name} ${JSON.stringify(args).slice(0, 200)}: ${JSON.stringify(r.error.issues)}`);
          }
        }
      }
      expect(names.length).toBeGreaterThanOrEqual(30);
      expect(misfits).toEqual([]);
      expect(accepted).toBeGreaterThan(names.length * 60 * 0.9);
    } finally {
      await rt.close();
    }
  });

  it('zod constructs come back valid: bounds, patterns, enums, nullable, records, integers past 32 bits', () => {
    const schema = z.object({
      id: z.string().regex(/^obj_[0-9a-f]{16}$/),
      label: z.string().min(2).max(5),
      kind: z.enum(['a', 'b']),
      note: z.string().nullable().optional(),
      big: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      ratio: z.number().min(0).max(60),
      tags: z.array(z.string().max(3)).min(1).max(3),
      meta: z.record(z.string(), z.boolean()),
      flag: z.literal(true).default(true),
    });
    const arb = arbitraryFromJsonSchema(z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>);
    for (const v of fc.sample(arb, { seed: 11, numRuns: 300 })) expect(schema.safeParse(v).success, JSON.stringify(v)).toBe(true);
    expect(fc.sample(arb, { seed: 11, numRuns: 300 }).some((v) => (v as { big: number }).big > 2 ** 31)).toBe(true);
  });

  it('a recursive $ref (a JSON value) stops at maxDepth', () => {
    const json: z.ZodType = z.lazy(() =>
      z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(json), z.record(z.string(), json)]),
    );
    const schema = z.toJSONSchema(z.object({ payload: json }), { io: 'input' }) as Record<string, unknown>;
    const arb = arbitraryFromJsonSchema(schema, { maxDepth: 3 });
    const depths = fc.sample(arb, { seed: 5, numRuns: 300 }).map((v) => depthOf((v as { payload: unknown }).payload));
    expect(Math.max(...depths)).toBeLessThanOrEqual(3);
    expect(Math.max(...depths)).toBeGreaterThan(0);
  });

  it('known strings are offered for their field when they fit its bounds, never when they do not', () => {
    const properties = { child_pid: { type: 'string', maxLength: 20 }, name: { type: 'string', maxLength: 3 } };
    const schema = { type: 'object', properties, required: ['child_pid', 'name'] };
    const asked: string[] = [];
    const known = (key: string, _i: number, accept: (s: string) => boolean) => {
      asked.push(key);
      const v = key === 'child_pid' ? 'pid_0000000000000001' : 'far too long for three';
      return accept(v) ? v : undefined;
    };
    const values = fc.sample(arbitraryFromJsonSchema(schema, { known }), { seed: 3, numRuns: 200 }) as Record<string, string>[];
    expect(new Set(asked)).toEqual(new Set(['child_pid', 'name']));
    expect(values.filter((v) => v.child_pid === 'pid_0000000000000001').length).toBeGreaterThan(50);
    expect(values.every((v) => v.name.length <= 3)).toBe(true);
  });
});
