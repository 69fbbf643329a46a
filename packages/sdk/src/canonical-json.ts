import { hash } from 'node:crypto';

/**
 * Canonical JSON (RFC 8785, JCS): object keys sorted by UTF-16 code units at every level, no whitespace,
 * numbers and strings serialized as ECMAScript `JSON.stringify` does.
 *
 * @example
 * canonicalJson({ z: '雪', a: [true, null, 3] }); // '{"a":[true,null,3],"z":"雪"}'
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, new Set());
}

function serialize(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (seen.has(value)) throw new TypeError('canonicalJson: cyclic value');
      seen.add(value);
      try {
        if (Array.isArray(value)) return `[${value.map((v) => serialize(v, seen)).join(',')}]`;
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null)
          throw new TypeError(`canonicalJson: not a plain object (${proto?.constructor?.name ?? 'unknown'})`);
        const keys = Object.keys(value)
          .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
          .sort();
        return `{${keys.map((k) => `${JSON.stringify(k)}:${serialize((value as Record<string, unknown>)[k], seen)}`).join(',')}}`;
      } finally {
        seen.delete(value);
      }
    }
    default:
      throw new TypeError(`canonicalJson: ${typeof value} is not JSON`);
  }
}

/** True when `value` is finite JSON (plain objects, arrays, strings, finite numbers, booleans, null; no cycles). */
export function isJsonValue(value: unknown): boolean {
  try {
    canonicalJson(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Lowercase hex sha256 of a string (UTF-8) or bytes. One-shot (`crypto.hash`): no Hash object per digest, which
 * cost more than hashing the short texts most callers pass (a step hashes about a hundred prompt paragraphs).
 */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/** sha256 of the canonical JSON of `value`. */
export function canonicalSha256(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
