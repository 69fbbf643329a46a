import { RIGHTS, type Right } from '@libos/sdk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CapabilityRecord } from './capability-record.js';
import { canonicalJson } from '@libos/sdk';
import { createTestStore } from './internal/testing/test-store.js';
import { covers } from './resource.js';

const seg = fc.constantFrom('a', 'b', 'ab');
const body = fc
  .array(fc.tuple(seg, fc.constantFrom(':', '/')), { maxLength: 2 })
  .chain((parts) => seg.map((last) => parts.map(([s, sep]) => s + sep).join('') + last));
const resource = fc.oneof(
  body.map((b) => `k:${b}`),
  body.map((b) => `k:${b}:*`),
  body.map((b) => `k:${b}/*`),
  fc.constant('k:*'),
);
const rights = fc.subarray(['read', 'write', 'execute', 'grant'] as Right[], { minLength: 1 });
const sometimes = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: a });
const step = fc.record({
  resource: fc.oneof({ weight: 1, arbitrary: resource }, { weight: 2, arbitrary: fc.constant('SAME') }),
  narrowRights: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  rights,
  delegable: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  expiresInMs: sometimes(fc.integer({ min: 1, max: 100_000 })),
  maxDepth: sometimes(fc.integer({ min: 0, max: 6 })),
  uses: sometimes(fc.integer({ min: 1, max: 3 })),
});
const probes = ['k:a', 'k:b', 'k:ab', 'k:a:b', 'k:a/b', 'k:ab/a', 'k:b:a/b', 'k:a/a:b'];

describe('property: delegation chains', () => {
  it('[CAP-58] every derived grant is within its source; revoking any ancestor denies every descendant', async () => {
    let delegated = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ root: step, steps: fc.array(step, { minLength: 1, maxLength: 5 }), revokeAt: fc.nat() }),
        async ({ root, steps, revokeAt }) => {
          const s = await createTestStore();
          try {
            const pid = (i: number) => `pid_${i.toString(16).padStart(16, '0')}`;
            const now = s.clock.now().getTime();
            const exp = (ms: number | undefined) => (ms === undefined ? undefined : new Date(now + ms).toISOString());
            const chain: CapabilityRecord[] = [
              await s.run((scope) =>
                s.engine.issueTrusted(
                  scope,
                  {
                    subject: pid(0),
                    resource: root.resource === 'SAME' ? 'k:*' : root.resource,
                    rights: root.rights,
                    delegable: true,
                    expiresAt: exp(root.expiresInMs),
                    maxDepth: root.maxDepth,
                    constraints: { shell_policy_level: 'std' },
                  },
                  'host',
                ),
              ),
            ];
            for (const st of steps) {
              const parent = chain[chain.length - 1]!;
              const child = pid(chain.length);
              const before = (await s.run((scope) => s.engine.list(scope, child, { includeInactive: true }))).length;
              try {
                const narrowed = parent.rights.filter((r) => st.rights.includes(r));
                const rs = st.narrowRights && narrowed.length > 0 ? narrowed : st.rights;
                const res = st.resource === 'SAME' ? parent.resource : st.resource;
                const rec = await s.run((scope) =>
                  s.engine.delegate(
                    scope,
                    parent.id,
                    child,
                    {
                      resource: res,
                      rights: rs,
                      delegable: st.delegable,
                      expiresAt: exp(st.expiresInMs),
                      maxDepth: st.maxDepth,
                      usesRemaining: st.uses,
                    },
                    parent.subject,
                  ),
                );
                // Within the parent: resource, rights, expiry, constraints, depth.
                expect(covers(parent.resource, rec.resource)).toBe(true);
                expect(rec.rights.every((r) => parent.rights.includes(r))).toBe(true);
                if (parent.expiresAt !== null) expect(rec.expiresAt !== null && rec.expiresAt <= parent.expiresAt).toBe(true);
                expect(canonicalJson(rec.constraints)).toBe(canonicalJson(parent.constraints));
                expect(rec.depth).toBe(parent.depth + 1);
                expect(rec.depth).toBeLessThanOrEqual(parent.maxDepth ?? 4);
                expect((rec.maxDepth ?? 4) <= (parent.maxDepth ?? 4)).toBe(true);
                if (rec.delegable) expect(parent.delegable).toBe(true);
                chain.push(rec);
                delegated++;
                if (rec.usesRemaining !== null || !rec.delegable) break;
              } catch (err) {
                expect((err as { code?: string }).code).toMatch(/^(delegation_denied|capability_invalid)$/);
                expect((await s.run((scope) => s.engine.list(scope, child, { includeInactive: true }))).length).toBe(before);
                break;
              }
            }
            // Decisions never exceed the root: whatever a descendant may do, the root may do.
            for (let i = 1; i < chain.length; i++) {
              for (const p of probes) {
                for (const r of RIGHTS) {
                  const d = await s.run((scope) => s.engine.authorize(scope, chain[i]!.subject, p, r));
                  if (d.allowed) {
                    expect(covers(chain[i - 1]!.resource, p) && chain[i - 1]!.rights.includes(r)).toBe(true);
                    expect(covers(chain[0]!.resource, p) && chain[0]!.rights.includes(r)).toBe(true);
                  }
                }
              }
            }
            const k = revokeAt % chain.length;
            await s.run((scope) => s.engine.revoke(scope, 'host', chain[k]!.id));
            for (let i = k; i < chain.length; i++) {
              for (const p of probes) {
                for (const r of RIGHTS)
                  expect((await s.run((scope) => s.engine.authorize(scope, chain[i]!.subject, p, r))).allowed).toBe(false);
              }
            }
          } finally {
            await s.close();
          }
        },
      ),
      { numRuns: 100 },
    );
    // The generator must actually build chains, or the property proves nothing.
    expect(delegated).toBeGreaterThan(25);
  });
});
