import { LibosError, RIGHTS, isRight, type Right } from '@libos/sdk';

/** At most this many rights on one grant. */
export const MAX_RIGHTS = 16;

/**
 * Validates a rights list: non-empty, at most 16, each from the closed set (no `*`, no `delegate`).
 * Returns the rights deduplicated in the canonical order of `RIGHTS`. Throws `rights_invalid` naming the bad value.
 *
 * @example
 * parseRights(['write', 'read', 'read']); // ['read', 'write']
 */
export function parseRights(value: unknown): readonly Right[] {
  if (!Array.isArray(value)) throw new LibosError('rights_invalid', 'rights: must be an array of rights', { details: { field: 'rights' } });
  if (value.length === 0) throw new LibosError('rights_invalid', 'rights: must not be empty', { details: { field: 'rights' } });
  if (value.length > MAX_RIGHTS)
    throw new LibosError('rights_invalid', `rights: at most ${MAX_RIGHTS} entries (got ${value.length})`, { details: { field: 'rights' } });
  for (const r of value) {
    if (!isRight(r)) {
      throw new LibosError('rights_invalid', `rights: ${JSON.stringify(r)} is not a right (one of ${RIGHTS.join(', ')})`, {
        details: { field: 'rights', value: typeof r === 'string' ? r.slice(0, 64) : typeof r },
      });
    }
  }
  return Object.freeze(RIGHTS.filter((r) => (value as unknown[]).includes(r)));
}

/** Validates one right (throws `rights_invalid`). */
export function parseRight(value: unknown): Right {
  if (!isRight(value))
    throw new LibosError('rights_invalid', `right: ${JSON.stringify(value)} is not a right (one of ${RIGHTS.join(', ')})`, {
      details: { field: 'right' },
    });
  return value;
}
