import { describe, expect, it } from 'vitest';
import { isoInZone } from './get-current-time.js';

describe('isoInZone', () => {
  const t = new Date('2026-11-30T12:48:30.750Z');
  it('[S-C1] UTC carries an explicit +00:00 offset, never Z', () => {
    expect(isoInZone(t, 'UTC')).toBe('2026-11-30T12:48:30+00:00');
    expect(isoInZone(t, 'utc')).toBe('2026-11-30T12:48:30+00:00');
  });
  it('[S-C1] UTC without a formatter reads the same as through Intl (Etc/UTC), years 1..9999, leap days included', () => {
    const instants = [
      '0001-01-01T00:00:00.000Z',
      '0099-12-31T23:59:59.000Z',
      '1969-12-31T23:59:59.999Z',
      '2024-02-29T23:59:59.500Z',
      '9999-12-31T23:59:59Z',
    ];
    for (let i = 0; i < 200; i++) instants.push(new Date(Date.UTC(1900, 0, 1) + i * 7_654_321_987).toISOString());
    for (const iso of instants) expect(isoInZone(new Date(iso), 'UTC')).toBe(isoInZone(new Date(iso), 'Etc/UTC'));
  });
  it('[S-C3] Asia/Shanghai is +08:00', () => {
    expect(isoInZone(t, 'Asia/Shanghai')).toBe('2026-11-30T20:48:30+08:00');
  });
  it('follows daylight saving and half-hour zones', () => {
    expect(isoInZone(new Date('2026-07-01T12:00:00Z'), 'America/New_York')).toBe('2026-07-01T08:00:00-04:00');
    expect(isoInZone(new Date('2026-01-01T12:00:00Z'), 'America/New_York')).toBe('2026-01-01T07:00:00-05:00');
    expect(isoInZone(t, 'Asia/Kolkata')).toBe('2026-11-30T18:18:30+05:30');
  });
  it('[S-C22] the ISO text names the same instant as unix seconds', () => {
    const iso = isoInZone(t, 'Asia/Shanghai');
    expect(Date.parse(iso)).toBe(Math.floor(t.getTime() / 1000) * 1000);
  });
});
