import { DEFAULT_LABELS, INTEGRITY_ORDER, LibosError, SENSITIVITY_ORDER, TRUST_ORDER, type DataLabels } from '@libos/sdk';
import { canonicalLength } from './canonical.js';
import { codePointLength, copyJson, type JsonValue } from './json-value.js';
import { identityLabelProblem } from './labels.js';
import { jsonSize } from './size.js';
import type { ObjectMetadata } from '../object-record.js';

export type { ObjectMetadata } from '../object-record.js';

/** Bounds of metadata (reference defaults). */
export const METADATA_LIMITS = {
  size: 131_072,
  depth: 64,
  textChars: 32_000,
  tags: 128,
  tagChars: 2_048,
} as const;

/** The metadata keys a model may set on create_memory_object. */
export const MODEL_METADATA_KEYS = [
  'title',
  'summary',
  'tags',
  'mime_type',
  'sensitivity',
  'retention_policy',
  'trust_level',
  'integrity',
  'tenant',
  'principal',
] as const;

/** Trust and integrity a model may declare: never above `unknown`. */
const MODEL_TRUST = new Set(['untrusted', 'unknown']);

/** Validated metadata minus the derived token estimate, plus the labels it declares. */
export interface ParsedMetadata {
  readonly descriptive: Omit<ObjectMetadata, 'token_estimate'>;
  readonly declared: DataLabels;
}

const invalid = (field: string, why: string) => new LibosError('invalid_metadata', `${field}: ${why}`, { details: { field } });

function asPlainObject(raw: unknown, field: string): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw invalid(field, `must be a JSON object (got ${Array.isArray(raw) ? 'array' : typeof raw})`);
  return raw as Record<string, unknown>;
}

function depthOf(value: JsonValue): number {
  if (value === null || typeof value !== 'object') return 0;
  let max = 0;
  for (const v of Array.isArray(value) ? value : Object.values(value)) max = Math.max(max, depthOf(v as JsonValue));
  return max + 1;
}

/**
 * Validates namespace metadata: a JSON object, nesting ≤64, SIZE ≤131,072. Stored as given, never interpreted
 * (so `{"grant":"all"}` grants nothing). Throws `invalid_metadata`.
 *
 * @example
 * parseNamespaceMetadata({ purpose: 'research' }); // { purpose: 'research' }
 */
export function parseNamespaceMetadata(raw: unknown): { readonly [key: string]: JsonValue } {
  const obj = asPlainObject(raw, 'metadata');
  const copy = copyJson(obj, METADATA_LIMITS.depth + 1);
  if (!copy.ok)
    throw invalid(
      'metadata',
      `must be JSON nested at most ${METADATA_LIMITS.depth} levels (${copy.problem.reason} at ${copy.problem.pointer || '/'})`,
    );
  const depth = depthOf(copy.value);
  if (depth > METADATA_LIMITS.depth) throw invalid('metadata', `must be nested at most ${METADATA_LIMITS.depth} levels (got ${depth})`);
  const size = jsonSize(copy.value);
  if (size > METADATA_LIMITS.size) throw invalid('metadata', `SIZE must be at most ${METADATA_LIMITS.size} (got ${size})`);
  return copy.value as { readonly [key: string]: JsonValue };
}

function optionalText(obj: Record<string, unknown>, key: string): string | null {
  const v = obj[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw invalid(`metadata.${key}`, 'must be a string or null');
  const chars = codePointLength(v);
  if (chars > METADATA_LIMITS.textChars)
    throw invalid(`metadata.${key}`, `must be at most ${METADATA_LIMITS.textChars} characters (got ${chars})`);
  return v;
}

function optionalEnum<T extends string>(obj: Record<string, unknown>, key: string, order: readonly T[], fallback: T): T {
  const v = obj[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string' || !(order as readonly string[]).includes(v))
    throw invalid(`metadata.${key}`, `must be one of ${order.join(', ')} (got ${JSON.stringify(v)})`);
  return v as T;
}

function optionalIdentity(obj: Record<string, unknown>, key: string, allowMixed: boolean): string | null {
  const v = obj[key] ?? null;
  const problem = identityLabelProblem(v, allowMixed);
  if (problem !== null) throw invalid(`metadata.${key}`, problem);
  return v as string | null;
}

/**
 * Validates metadata passed to `create_memory_object` in the spec's order: a declassification authority or
 * trust/integrity above `unknown` is `label_elevation_denied`; an unknown key or bad value is `invalid_metadata`.
 * Declared labels get defaults (normal, unknown, unknown) and origin is forced to `llm`.
 *
 * @example
 * parseModelMetadata({ title: 'Plan', sensitivity: 'confidential' }).declared.origin; // 'llm'
 */
export function parseModelMetadata(raw: unknown): ParsedMetadata {
  const obj = asPlainObject(raw, 'metadata');
  const declass = obj.declassification_authority;
  if (declass !== undefined && declass !== null && declass !== '') {
    throw new LibosError(
      'label_elevation_denied',
      'metadata.declassification_authority: models cannot declassify; it is set only by the host',
      {
        details: { field: 'metadata.declassification_authority' },
      },
    );
  }
  const unknown = Object.keys(obj).filter((k) => !(MODEL_METADATA_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw invalid(
      'metadata',
      `unknown key(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}; allowed: ${MODEL_METADATA_KEYS.join(', ')} ` +
        `(origin and token_estimate are derived)`,
    );
  }
  for (const key of ['trust_level', 'integrity'] as const) {
    const v = obj[key];
    const order: readonly string[] = key === 'trust_level' ? TRUST_ORDER : INTEGRITY_ORDER;
    if (typeof v === 'string' && order.includes(v) && !MODEL_TRUST.has(v)) {
      throw new LibosError(
        'label_elevation_denied',
        `metadata.${key}: models may declare only untrusted or unknown (got ${JSON.stringify(v)})`,
        {
          details: { field: `metadata.${key}` },
        },
      );
    }
  }
  return parseMetadataFields(obj, { origin: 'llm' });
}

/**
 * Validates host-supplied metadata: the same keys and bounds, any trust/integrity (the host is trusted).
 *
 * @example
 * parseHostMetadata({ title: 'goal' }).declared.sensitivity; // 'normal'
 */
export function parseHostMetadata(raw: unknown): ParsedMetadata {
  const obj = asPlainObject(raw, 'metadata');
  const unknown = Object.keys(obj).filter((k) => !(MODEL_METADATA_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0)
    throw invalid(
      'metadata',
      `unknown key(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}; allowed: ${MODEL_METADATA_KEYS.join(', ')}`,
    );
  return parseMetadataFields(obj, { origin: null });
}

function parseMetadataFields(obj: Record<string, unknown>, opts: { readonly origin: string | null }): ParsedMetadata {
  const title = optionalText(obj, 'title');
  const summary = optionalText(obj, 'summary');
  const mimeType = optionalText(obj, 'mime_type');
  let tags: string[] = [];
  if (obj.tags !== undefined && obj.tags !== null) {
    if (!Array.isArray(obj.tags)) throw invalid('metadata.tags', `must be an array of strings (got ${typeof obj.tags})`);
    if (obj.tags.length > METADATA_LIMITS.tags)
      throw invalid('metadata.tags', `must have at most ${METADATA_LIMITS.tags} items (got ${obj.tags.length})`);
    tags = obj.tags.map((t, i) => {
      if (typeof t !== 'string') throw invalid(`metadata.tags[${i}]`, 'must be a string');
      const chars = codePointLength(t);
      if (chars > METADATA_LIMITS.tagChars)
        throw invalid(`metadata.tags[${i}]`, `must be at most ${METADATA_LIMITS.tagChars} characters (got ${chars})`);
      return t;
    });
  }
  let retention = 'default';
  if (obj.retention_policy !== undefined && obj.retention_policy !== null) {
    if (typeof obj.retention_policy !== 'string' || obj.retention_policy.trim() === '')
      throw invalid('metadata.retention_policy', 'must be a non-blank string');
    retention = obj.retention_policy;
  }
  const declared: DataLabels = {
    ...DEFAULT_LABELS,
    sensitivity: optionalEnum(obj, 'sensitivity', SENSITIVITY_ORDER, 'normal'),
    trust_level: optionalEnum(obj, 'trust_level', TRUST_ORDER, 'unknown'),
    integrity: optionalEnum(obj, 'integrity', INTEGRITY_ORDER, 'unknown'),
    tenant: optionalIdentity(obj, 'tenant', true),
    principal: optionalIdentity(obj, 'principal', true),
    origin: opts.origin,
  };
  const copy = copyJson(obj, METADATA_LIMITS.depth + 1);
  if (!copy.ok) throw invalid('metadata', `must be JSON (${copy.problem.reason} at ${copy.problem.pointer || '/'})`);
  const size = jsonSize(copy.value);
  if (size > METADATA_LIMITS.size) throw invalid('metadata', `SIZE must be at most ${METADATA_LIMITS.size} (got ${size})`);
  return { descriptive: { title, summary, tags, mime_type: mimeType, retention_policy: retention }, declared };
}

/**
 * The advisory token estimate of a payload: max(1, ⌊code points of CANON(payload) / 4⌋).
 *
 * @example
 * tokenEstimate({ a: 1 }); // 1
 */
export function tokenEstimate(payload: JsonValue): number {
  return tokensForChars(canonicalLength(payload));
}

/**
 * The token estimate of a payload whose CANON has `chars` code points (what an append keeps up to date).
 *
 * @example
 * tokensForChars(27); // 6
 */
export function tokensForChars(chars: number): number {
  return Math.max(1, Math.floor(chars / 4));
}
