import { createHash } from 'node:crypto';
import type { JsonValue } from './json-value.js';

/** Orders strings by Unicode code point (not UTF-16 unit, which differs for astral vs. U+E000..U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/**
 * CANON: the text every read, page and digest is computed on. Keys sorted by code point at every level,
 * no whitespace, raw non-ASCII, strings and numbers as `JSON.stringify` writes them (lone surrogates escaped).
 *
 * @example
 * canonicalText({ z: '雪', a: [true, null, 3] }); // '{"a":[true,null,3],"z":"雪"}'
 */
export function canonicalText(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${(value as readonly JsonValue[]).map(canonicalText).join(',')}]`;
  const obj = value as { readonly [key: string]: JsonValue };
  const keys = Object.keys(obj).sort(compareCodePoints);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalText(obj[k]!)}`).join(',')}}`;
}

/** The canonical bytes (UTF-8 of CANON) and their sha256. */
export interface Canonical {
  readonly text: string;
  readonly bytes: Buffer;
  readonly sha256: string;
}

/**
 * CANON plus its UTF-8 bytes and lowercase hex sha256.
 *
 * @example
 * canonicalize('雪x').bytes.length; // 6
 */
export function canonicalize(value: JsonValue): Canonical {
  const text = canonicalText(value);
  const bytes = Buffer.from(text, 'utf8');
  return { text, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}
