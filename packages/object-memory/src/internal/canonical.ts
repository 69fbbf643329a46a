import { sha256Hex } from '@libos/sdk';
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
  return { text, bytes, sha256: sha256Hex(bytes) };
}

/**
 * Code points of `CANON(value)`, counted without building the text (key order does not change the count), so
 * a ledger's token estimate can follow its appends entry by entry.
 *
 * @example
 * canonicalLength({ z: '雪', a: [true, null, 3] }); // 27, as '{"a":[true,null,3],"z":"雪"}'
 */
export function canonicalLength(value: JsonValue): number {
  if (value === null) return 4;
  switch (typeof value) {
    case 'boolean':
      return value ? 4 : 5;
    case 'number':
      return JSON.stringify(value).length;
    case 'string':
      return quotedLength(value);
    default:
      break;
  }
  if (Array.isArray(value)) {
    const items = value as readonly JsonValue[];
    let n = items.length === 0 ? 2 : 1 + items.length;
    for (const item of items) n += canonicalLength(item);
    return n;
  }
  const obj = value as { readonly [key: string]: JsonValue };
  const keys = Object.keys(obj);
  let n = keys.length === 0 ? 2 : 1 + keys.length;
  for (const key of keys) n += quotedLength(key) + 1 + canonicalLength(obj[key]!);
  return n;
}

/** Code points of `JSON.stringify(text)`: quotes, short or `\uXXXX` escapes, raw non-ASCII, escaped lone surrogates. */
export function quotedLength(text: string): number {
  let n = 2;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20) n += c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      n += next >= 0xdc00 && next <= 0xdfff ? 1 : 6;
    } else n += c >= 0xdc00 && c <= 0xdfff ? 6 : 1;
  }
  return n;
}
