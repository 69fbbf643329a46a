import { describe, expect, test } from 'vitest';
import { BACKOFF_CAP_MS, RETRY_AFTER_CAP_MS, parseRetryAfterMs, retryDelayMs } from './backoff.js';

describe('retry backoff', () => {
  test('doubles the ceiling per retry up to the cap and jitters within its upper half', () => {
    expect([0, 1, 2, 3].map((r) => retryDelayMs(r, null, () => 0))).toEqual([250, 500, 1000, 2000]);
    expect([0, 1, 2, 3].map((r) => retryDelayMs(r, null, () => 0.999999))).toEqual([500, 1000, 2000, 4000]);
    expect(retryDelayMs(20, null, () => 0.999999)).toBe(BACKOFF_CAP_MS);
  });

  test('parses Retry-After as delta-seconds or an HTTP date, and ignores garbage', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfterMs('3', now)).toBe(3000);
    expect(parseRetryAfterMs(' 1.5 ', now)).toBe(1500);
    expect(parseRetryAfterMs('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfterMs('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon', now)).toBeNull();
    expect(parseRetryAfterMs('-1', now)).toBeNull();
    expect(parseRetryAfterMs(null, now)).toBeNull();
  });

  test('uses Retry-After instead of the backoff, capped', () => {
    expect(retryDelayMs(3, '1', () => 0.5)).toBe(1000);
    expect(retryDelayMs(0, '86400', () => 0.5)).toBe(RETRY_AFTER_CAP_MS);
    expect(retryDelayMs(1, 'garbage', () => 0)).toBe(500);
  });
});
