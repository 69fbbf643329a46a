import { DEFAULT_LABELS, type DataLabels } from '@libos/sdk';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { mergeLabels, requireValidLabels } from './labels.js';

const L = (over: Partial<DataLabels>): DataLabels => ({ ...DEFAULT_LABELS, ...over });

describe('label merge', () => {
  test('[OM-32] a secret source keeps a declared public object secret', () => {
    expect(mergeLabels(L({ sensitivity: 'public', origin: 'llm' }), [L({ sensitivity: 'secret' })]).sensitivity).toBe('secret');
  });

  test('[OM-33] parent tenant a and declared b give mixed', () => {
    expect(mergeLabels(L({ tenant: 'b' }), [L({ tenant: 'a' })]).tenant).toBe('mixed');
    expect(mergeLabels(L({ tenant: null }), [L({ tenant: 'a' })]).tenant).toBe('a');
    expect(mergeLabels(L({ principal: 'p' }), [L({ principal: 'mixed' })]).principal).toBe('mixed');
  });

  test('[OM-34] parent trust untrusted and declared unknown give untrusted; integrity takes the minimum', () => {
    const m = mergeLabels(L({ trust_level: 'unknown' }), [L({ trust_level: 'untrusted', integrity: 'untrusted' })]);
    expect(m.trust_level).toBe('untrusted');
    expect(m.integrity).toBe('untrusted');
  });

  test('origin: own wins unless blank/local/unknown; then the single source origin, derived for several', () => {
    expect(mergeLabels(L({ origin: 'llm' }), [L({ origin: 'tool' })]).origin).toBe('llm');
    expect(mergeLabels(L({ origin: null }), [L({ origin: 'tool' })]).origin).toBe('tool');
    expect(mergeLabels(L({ origin: 'unknown' }), [L({ origin: 'tool' }), L({ origin: 'human' })]).origin).toBe('derived');
    expect(mergeLabels(L({ origin: 'local' }), []).origin).toBe('local');
  });

  test('declassification authority survives only as the single distinct value', () => {
    expect(mergeLabels(L({}), [L({ declassification_authority: 'h' })]).declassification_authority).toBe('h');
    expect(
      mergeLabels(L({ declassification_authority: 'g' }), [L({ declassification_authority: 'h' })]).declassification_authority,
    ).toBeNull();
  });

  test('property: merging never declassifies or endorses', () => {
    const labels = fc.record({
      sensitivity: fc.constantFrom('public', 'normal', 'confidential', 'restricted', 'secret'),
      trust_level: fc.constantFrom('untrusted', 'unknown', 'user_asserted', 'verified', 'trusted'),
      integrity: fc.constantFrom('untrusted', 'unknown', 'checked', 'verified'),
      origin: fc.constantFrom(null, 'llm', 'tool'),
      tenant: fc.constantFrom(null, 'a', 'b', 'mixed'),
      principal: fc.constantFrom(null, 'p'),
      declassification_authority: fc.constantFrom(null, 'h'),
    }) as fc.Arbitrary<DataLabels>;
    const S = ['public', 'normal', 'confidential', 'restricted', 'secret'];
    const T = ['untrusted', 'unknown', 'user_asserted', 'verified', 'trusted'];
    fc.assert(
      fc.property(labels, fc.array(labels, { maxLength: 4 }), (own, sources) => {
        const m = mergeLabels(own, sources);
        for (const l of [own, ...sources]) {
          expect(S.indexOf(m.sensitivity)).toBeGreaterThanOrEqual(S.indexOf(l.sensitivity));
          expect(T.indexOf(m.trust_level)).toBeLessThanOrEqual(T.indexOf(l.trust_level));
          if (l.tenant !== null && m.tenant !== 'mixed') expect(m.tenant).toBe(l.tenant);
        }
      }),
    );
  });

  test('re-validation refuses malformed merged labels', () => {
    expect(() => requireValidLabels(L({ origin: 'mixed' }), 'labels')).toThrow(/origin/);
    expect(() => requireValidLabels(L({ sensitivity: 'top' as never }), 'labels')).toThrow(/sensitivity/);
    expect(requireValidLabels(L({ tenant: 'mixed' }), 'labels').tenant).toBe('mixed');
  });
});
