import { LibosError } from '@libos/sdk';
import type { Canonical } from './canonical.js';
import { codePointLength, jsonKind, type JsonKind, type JsonValue } from './json-value.js';

/** A serialized read result may use min(1,500,000, 200,000) bytes ... */
export const READ_RESULT_BYTE_LIMIT = 200_000;
/** ... minus this reserve for the transport envelope. */
export const READ_RESULT_RESERVE_BYTES = 512;

/** Shape of the selected value, without its content. */
export type PayloadShape =
  | { readonly kind: 'object'; readonly field_count: number }
  | { readonly kind: 'array'; readonly item_count: number }
  | { readonly kind: 'string'; readonly character_count: number; readonly utf8_bytes: number }
  | { readonly kind: 'number' | 'boolean' | 'null' };

/**
 * The shape of a JSON value.
 *
 * @example
 * shapeOf('雪x'); // { kind: 'string', character_count: 2, utf8_bytes: 4 }
 */
export function shapeOf(value: JsonValue): PayloadShape {
  const kind = jsonKind(value);
  switch (kind) {
    case 'object':
      return { kind, field_count: Object.keys(value as object).length };
    case 'array':
      return { kind, item_count: (value as readonly JsonValue[]).length };
    case 'string':
      return { kind, character_count: codePointLength(value as string), utf8_bytes: Buffer.byteLength(value as string, 'utf8') };
    default:
      return { kind };
  }
}

export interface PageRequest<E extends Readonly<Record<string, unknown>>> {
  /** The selected subtree. */
  readonly selection: JsonValue;
  /** CANON of the selection, its bytes and digest. */
  readonly canonical: Canonical;
  /** Code points per page (1..200,000). */
  readonly maxChars: number;
  /** UTF-8 byte offset into the canonical bytes. */
  readonly cursor: number;
  readonly expectedSha256: string | null;
  /** Identity fields that lead the result (oid, namespace, name, type, version, json_pointer). */
  readonly envelope: E;
}

/** What `read_memory_object` returns after its identity fields. */
export interface PageResult {
  readonly payload_type: JsonKind;
  readonly shape: PayloadShape;
  readonly serialized_bytes: number;
  readonly sha256: string;
  readonly representation: 'json_value' | 'canonical_json_page';
  readonly payload: JsonValue;
  readonly preview?: string;
  readonly preview_encoding?: 'canonical_json_utf8';
  readonly page_offset_bytes: number;
  readonly page_bytes: number;
  readonly truncated: boolean;
  readonly omitted_bytes: number;
  readonly next_cursor?: number;
}

const resultFits = (result: unknown): boolean =>
  Buffer.byteLength(JSON.stringify(result), 'utf8') <= READ_RESULT_BYTE_LIMIT - READ_RESULT_RESERVE_BYTES;

/**
 * The paged-read algorithm (docs/behaviour/object-memory.md): digest check, then the whole value when it fits at cursor 0,
 * else one page of at most `maxChars` code points starting at a UTF-8 lead byte, shrunk to the serialized budget.
 * Returns the full result (envelope first).
 *
 * @example
 * import { canonicalize } from './canonical.js';
 * const c = canonicalize({ a: 1 });
 * readPage({ selection: { a: 1 }, canonical: c, maxChars: 12000, cursor: 0, expectedSha256: null, envelope: {} }).representation;
 * // 'json_value'
 */
export function readPage<E extends Readonly<Record<string, unknown>>>(req: PageRequest<E>): E & PageResult {
  const { canonical, cursor, maxChars, envelope } = req;
  const n = canonical.bytes.length;
  if (req.expectedSha256 !== null && req.expectedSha256 !== canonical.sha256) {
    throw new LibosError(
      'digest_mismatch',
      `expected_sha256: ${req.expectedSha256} does not match the current sha256 ${canonical.sha256} of this ` +
        `selection; the value changed since your first page, so restart at cursor 0`,
      { details: { field: 'expected_sha256', sha256: canonical.sha256 } },
    );
  }
  const head = {
    ...envelope,
    payload_type: jsonKind(req.selection),
    shape: shapeOf(req.selection),
    serialized_bytes: n,
    sha256: canonical.sha256,
  };
  if (cursor === 0 && codePointLength(canonical.text) <= maxChars) {
    const whole = {
      ...head,
      representation: 'json_value' as const,
      payload: req.selection,
      page_offset_bytes: 0,
      page_bytes: n,
      truncated: false,
      omitted_bytes: 0,
    };
    if (resultFits(whole)) return whole;
  }
  if (cursor >= n) {
    throw new LibosError(
      'cursor_out_of_range',
      `cursor: must be below serialized_bytes ${n} (got ${cursor}); the last page has no next_cursor`,
      {
        details: { field: 'cursor', serialized_bytes: n },
      },
    );
  }
  if ((canonical.bytes[cursor]! & 0xc0) === 0x80) {
    throw new LibosError('cursor_not_boundary', `cursor: byte ${cursor} is inside a UTF-8 character; use only a returned next_cursor`, {
      details: { field: 'cursor' },
    });
  }
  // ends[k-1] = byte offset just after k code points from the cursor.
  const ends: number[] = [];
  for (let i = cursor; ends.length < maxChars && i < n; ) {
    i++;
    while (i < n && (canonical.bytes[i]! & 0xc0) === 0x80) i++;
    ends.push(i);
  }
  const page = (k: number) => {
    const end = ends[k - 1]!;
    const pageBytes = end - cursor;
    const omitted = n - end;
    return {
      ...head,
      representation: 'canonical_json_page' as const,
      payload: null,
      preview: canonical.bytes.toString('utf8', cursor, end),
      preview_encoding: 'canonical_json_utf8' as const,
      page_offset_bytes: cursor,
      page_bytes: pageBytes,
      truncated: omitted > 0,
      omitted_bytes: omitted,
      ...(end < n ? { next_cursor: end } : {}),
    };
  };
  let best = page(ends.length);
  if (resultFits(best)) return best;
  let lo = 0; // largest k known to fit (0 = none yet)
  let hi = ends.length; // smallest k known not to fit
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    const candidate = page(mid);
    if (resultFits(candidate)) {
      lo = mid;
      best = candidate;
    } else hi = mid;
  }
  if (lo === 0) {
    throw new LibosError(
      'read_budget_exhausted',
      `read: even one character does not fit the ${READ_RESULT_BYTE_LIMIT}-byte result budget beside this envelope`,
      {
        details: { cursor },
      },
    );
  }
  return best;
}
