import { parseExpiry } from '@libos/capabilities';
import { assertJsonBounds, isLibosError, isRight, type Right } from '@libos/sdk';
import { UsageError } from '../output.js';

/**
 * Parses a JSON object argument; a usage error (exit 2) names the argument when it does not parse, and a field past
 * the shared JSON bounds is `invalid_arguments` (exit 1) naming it. Nothing is opened or written either way.
 */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`${what} must be a JSON object`);
  // The shared JSON bounds, before the store is opened: too deep is invalid_arguments naming the field (exit 1).
  for (const [field, value] of Object.entries(v)) assertJsonBounds(value, field);
  return v as Record<string, unknown>;
}

/** Parses `read,write` into rights; unknown rights are a usage error naming them. */
export function parseRights(text: string): Right[] {
  const rights = text.split(/[,\s]+/).filter(Boolean);
  const bad = rights.filter((r) => !isRight(r));
  if (rights.length === 0 || bad.length > 0)
    throw new UsageError(
      `rights: ${bad.length ? `unknown right(s) ${bad.join(', ')}` : 'none given'}; use a comma list of read, ` +
        `write, delete, execute, materialize, link, diff, grant, revoke, approve, admin`,
    );
  return rights as Right[];
}

/** Parses a positive integer flag. */
export function parsePositiveInt(text: string, flag: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer (got ${JSON.stringify(text)})`);
  return n;
}

/** Parses an ISO-8601 expiry flag (no offset = UTC) to UTC; anything else is a usage error naming the flag. */
export function parseExpiryFlag(text: string, flag: string): string {
  try {
    return parseExpiry(text, flag);
  } catch (err) {
    const got = JSON.stringify(text.slice(0, 64));
    if (isLibosError(err)) throw new UsageError(`${flag} must be an ISO-8601 timestamp such as 2030-01-01T10:00:00Z (got ${got})`);
    throw err;
  }
}
