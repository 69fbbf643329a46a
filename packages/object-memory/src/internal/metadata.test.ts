import { describe, expect, test } from 'vitest';
import { parseHostMetadata, parseModelMetadata, parseNamespaceMetadata, tokenEstimate } from './metadata.js';
import { codeOf } from './testing/code-of.js';

describe('object metadata', () => {
  test('[OM-28] trust_level verified, integrity checked, declassification_authority h are label_elevation_denied', () => {
    expect(codeOf(() => parseModelMetadata({ trust_level: 'verified' }))).toBe('label_elevation_denied');
    expect(codeOf(() => parseModelMetadata({ integrity: 'checked' }))).toBe('label_elevation_denied');
    expect(codeOf(() => parseModelMetadata({ declassification_authority: 'h' }))).toBe('label_elevation_denied');
    // elevation is judged before unknown keys
    expect(codeOf(() => parseModelMetadata({ declassification_authority: 'h', foo: 1 }))).toBe('label_elevation_denied');
    expect(parseModelMetadata({ trust_level: 'untrusted', integrity: 'unknown' }).declared).toMatchObject({
      trust_level: 'untrusted',
      integrity: 'unknown',
    });
  });

  test('[OM-29] origin, token_estimate or foo are invalid_metadata', () => {
    for (const key of ['origin', 'token_estimate', 'foo'])
      expect(
        codeOf(() => parseModelMetadata({ [key]: 'x' })),
        key,
      ).toBe('invalid_metadata');
  });

  test('[OM-30] sensitivity top, tags "x", tenant " a", a 32,001-char title are invalid_metadata', () => {
    expect(codeOf(() => parseModelMetadata({ sensitivity: 'top' }))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata({ tags: 'x' }))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata({ tenant: ' a' }))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata({ title: 't'.repeat(32_001) }))).toBe('invalid_metadata');
    expect(parseModelMetadata({ title: 't'.repeat(32_000) }).descriptive.title).toHaveLength(32_000);
    expect(codeOf(() => parseModelMetadata({ tags: Array.from({ length: 129 }, () => 't') }))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata({ tags: ['t'.repeat(2_049)] }))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata({ retention_policy: ' ' }))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata({ trust_level: 'bogus' }))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata('x'))).toBe('invalid_metadata');
    expect(codeOf(() => parseModelMetadata({ principal: 'p\u0001' }))).toBe('invalid_metadata');
  });

  test('[OM-31] defaults: normal, default retention, unknown trust/integrity; origin forced to llm; token_estimate derived', () => {
    const m = parseModelMetadata({});
    expect(m.declared).toEqual({
      sensitivity: 'normal',
      trust_level: 'unknown',
      integrity: 'unknown',
      origin: 'llm',
      tenant: null,
      principal: null,
      declassification_authority: null,
    });
    expect(m.descriptive).toEqual({ title: null, summary: null, tags: [], mime_type: null, retention_policy: 'default' });
    expect(tokenEstimate({ blob: 'x'.repeat(400) })).toBe(102); // ⌊411 chars / 4⌋
    expect(tokenEstimate(null)).toBe(1);
  });

  test('tenant and principal may be "mixed"; identity labels are at most 256 characters', () => {
    expect(parseModelMetadata({ tenant: 'mixed' }).declared.tenant).toBe('mixed');
    expect(codeOf(() => parseModelMetadata({ principal: 'p'.repeat(257) }))).toBe('invalid_metadata');
  });

  test('host metadata may carry any trust (the host is trusted) but the same keys and bounds', () => {
    expect(parseHostMetadata({ trust_level: 'trusted' }).declared.trust_level).toBe('trusted');
    expect(parseHostMetadata({}).declared.origin).toBeNull();
    expect(codeOf(() => parseHostMetadata({ foo: 1 }))).toBe('invalid_metadata');
  });
});

describe('namespace metadata', () => {
  test('[OM-8] {"grant":"all"} is stored as data', () => {
    expect(parseNamespaceMetadata({ grant: 'all' })).toEqual({ grant: 'all' });
    expect(parseNamespaceMetadata(undefined)).toEqual({});
  });

  test('not an object, nesting >64 or SIZE >131,072 is invalid_metadata', () => {
    expect(codeOf(() => parseNamespaceMetadata([1]))).toBe('invalid_metadata');
    expect(codeOf(() => parseNamespaceMetadata('x'))).toBe('invalid_metadata');
    let deep: unknown = 1;
    for (let i = 0; i < 64; i++) deep = { d: deep };
    expect(() => parseNamespaceMetadata(deep)).not.toThrow();
    expect(codeOf(() => parseNamespaceMetadata({ d: deep }))).toBe('invalid_metadata');
    expect(() => parseNamespaceMetadata({ blob: 'x'.repeat(131_060) })).not.toThrow();
    expect(codeOf(() => parseNamespaceMetadata({ blob: 'x'.repeat(131_061) }))).toBe('invalid_metadata');
    expect(codeOf(() => parseNamespaceMetadata({ n: NaN }))).toBe('invalid_metadata');
  });
});
