import type { JsonValue } from './json-value.js';

/**
 * SIZE of a JSON value: the length of its reference serialization (sorted keys, separators `", "` and `": "`,
 * every UTF-16 unit outside printable ASCII escaped, `\uXXXX` unless it has a short escape). Every byte bound
 * of Object Memory (payload 200,000, entry 32,768, metadata 131,072) is measured with it.
 * Key order does not change the length, so nothing is sorted.
 *
 * @example
 * jsonSize({ blob: 'x'.repeat(10) }); // 22 (N + 12)
 * jsonSize('雪');                     // 8 ("\u96ea")
 */
export function jsonSize(value: JsonValue): number {
  if (value === null) return 4;
  switch (typeof value) {
    case 'boolean':
      return value ? 4 : 5;
    case 'number':
      return numberSize(value);
    case 'string':
      return stringSize(value);
    default:
      break;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return 2;
    let n = 2 + 2 * (value.length - 1);
    for (const item of value as readonly JsonValue[]) n += jsonSize(item);
    return n;
  }
  const obj = value as { readonly [key: string]: JsonValue };
  const keys = Object.keys(obj);
  if (keys.length === 0) return 2;
  let n = 2 + 2 * (keys.length - 1);
  for (const key of keys) n += stringSize(key) + 2 + jsonSize(obj[key]!);
  return n;
}

/** Serialized length of a string with its quotes, ASCII-only escaping. */
export function stringSize(text: string): number {
  let n = 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e) n += c === 0x22 || c === 0x5c ? 2 : 1;
    else if (c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) n += 2;
    else n += 6;
  }
  return n;
}

/**
 * Serialized length of a number as the reference measures the JSON text JavaScript writes for it: an
 * integer written in plain digits (|v| < 1e21) counts as those digits; anything else is read back as a float
 * and counted as Python's float repr (shortest round-trip digits, fixed notation for decimal exponents
 * -4..15, else `d.ddde±XX` with at least two exponent digits).
 *
 * @example
 * numberSize(1e-7); // 5 ("1e-07")
 */
export function numberSize(value: number): number {
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return JSON.stringify(value).length;
  const sign = value < 0 ? 1 : 0;
  const [mantissa, exp] = Math.abs(value).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '').length;
  const e = Number(exp);
  if (e >= -4 && e < 16) return sign + (e < 0 ? 2 + (-e - 1) + digits : digits + 1);
  return sign + (digits === 1 ? 1 : digits + 1) + 2 + Math.max(2, String(Math.abs(e)).length);
}
