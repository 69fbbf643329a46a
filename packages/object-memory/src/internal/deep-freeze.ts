/**
 * Freezes a JSON value and everything in it, in place, and returns it (already-frozen parts are left as they are).
 *
 * @example
 * const v = deepFreeze({ tags: ['a'] });
 * Object.isFrozen(v.tags); // true
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}
