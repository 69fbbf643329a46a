import { describe, expect, it } from 'vitest';
import { isExpired, parseExpiry } from './expiry.js';

describe('expiry', () => {
  it('[CAP-19] offset-less timestamps are UTC; garbage is capability_invalid', () => {
    expect(parseExpiry('2030-01-01T10:00:00')).toBe('2030-01-01T10:00:00.000Z');
    expect(parseExpiry('2030-01-01T10:00:00+02:00')).toBe('2030-01-01T08:00:00.000Z');
    expect(parseExpiry('2030-01-01')).toBe('2030-01-01T00:00:00.000Z');
    for (const bad of ['zzzz', '2030-02-31T00:00:00Z', '2030-13-01', 'tomorrow', '1700000000']) {
      expect(() => parseExpiry(bad), bad).toThrowError(expect.objectContaining({ code: 'capability_invalid' }));
    }
  });

  it('expired iff expiresAt <= now; unparsable stored expiry counts as expired', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    expect(isExpired('2030-01-01T00:00:00.000Z', now)).toBe(true);
    expect(isExpired('2030-01-01T00:00:00.001Z', now)).toBe(false);
    expect(isExpired(null, now)).toBe(false);
    expect(isExpired('garbage', now)).toBe(true);
  });
});
