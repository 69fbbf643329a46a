import { LibosError } from '@libos/sdk';

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Epoch milliseconds of an ISO-8601 timestamp (no offset = UTC), or null when unparsable. */
export function expiryMillis(value: string): number | null {
  const m = ISO.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', off = 'Z'] = m;
  const ms = frac === '' ? '' : `.${frac.slice(1, 4).padEnd(3, '0')}`;
  const offset = off.toUpperCase() === 'Z' ? 'Z' : off.length === 5 ? `${off.slice(0, 3)}:${off.slice(3)}` : off;
  const text = `${y}-${mo}-${d}T${h}:${mi}:${s}${ms}${offset}`;
  const t = Date.parse(text);
  if (Number.isNaN(t)) return null;
  // Reject calendar overflow (e.g. 2024-02-31) that Date.parse would roll over.
  const check = new Date(t - (offset === 'Z' ? 0 : offsetMinutes(offset) * -60_000));
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() + 1 !== Number(mo) || check.getUTCDate() !== Number(d)) return null;
  return t;
}

function offsetMinutes(off: string): number {
  const sign = off.startsWith('-') ? -1 : 1;
  return sign * (Number(off.slice(1, 3)) * 60 + Number(off.slice(4, 6)));
}

/**
 * Normalizes an expiry to a UTC ISO string. ISO-8601 only; no offset means UTC.
 * Throws `capability_invalid` naming the field when it cannot be parsed.
 *
 * @example
 * parseExpiry('2030-01-01T10:00:00');       // '2030-01-01T10:00:00.000Z'
 * parseExpiry('2030-01-01T10:00:00+02:00'); // '2030-01-01T08:00:00.000Z'
 */
export function parseExpiry(value: unknown, field = 'expiresAt'): string {
  if (typeof value !== 'string')
    throw new LibosError('capability_invalid', `${field}: must be an ISO-8601 string (got ${typeof value})`, { details: { field } });
  const t = expiryMillis(value);
  if (t === null)
    throw new LibosError('capability_invalid', `${field}: ${JSON.stringify(value.slice(0, 64))} is not an ISO-8601 timestamp`, {
      details: { field },
    });
  return new Date(t).toISOString();
}

/** True when a stored expiry has passed (`expiresAt <= now`); an unparsable stored expiry counts as expired. */
export function isExpired(expiresAt: string | null, now: Date): boolean {
  if (expiresAt === null) return false;
  const t = expiryMillis(expiresAt);
  return t === null || t <= now.getTime();
}
