import {
  INTEGRITY_ORDER,
  LibosError,
  SENSITIVITY_ORDER,
  TRUST_ORDER,
  type DataLabels,
  type Integrity,
  type Sensitivity,
  type TrustLevel,
} from '@libos/sdk';

/** Identity labels (origin, tenant, principal, declassification_authority) are at most this many characters. */
export const MAX_IDENTITY_LABEL_CHARS = 256;

const rank = (order: readonly string[], v: string): number => order.indexOf(v);
const isBlankOrigin = (o: string | null): boolean => o === null || o === '' || o === 'local' || o === 'unknown';

function joinIdentity(values: readonly (string | null)[]): string | null {
  const distinct = new Set(values.filter((v): v is string => typeof v === 'string' && v !== ''));
  if (distinct.size === 0) return null;
  if (distinct.size > 1 || distinct.has('mixed')) return 'mixed';
  return [...distinct][0]!;
}

/**
 * merge(own, sources): max sensitivity, min trust and integrity; origin stays own unless own is
 * blank/local/unknown (then the single source origin, `derived` if several); tenant/principal widen to `mixed`
 * on disagreement; declassification_authority survives only when exactly one distinct value is present.
 * It can only make labels more restrictive, never declassify or endorse.
 *
 * @example
 * import { DEFAULT_LABELS } from '@libos/sdk';
 * mergeLabels({ ...DEFAULT_LABELS, tenant: 'b' }, [{ ...DEFAULT_LABELS, tenant: 'a' }]).tenant; // 'mixed'
 */
export function mergeLabels(own: DataLabels, sources: readonly DataLabels[]): DataLabels {
  const all = [own, ...sources];
  let sensitivity: Sensitivity = own.sensitivity;
  let trust: TrustLevel = own.trust_level;
  let integrity: Integrity = own.integrity;
  for (const l of sources) {
    if (rank(SENSITIVITY_ORDER, l.sensitivity) > rank(SENSITIVITY_ORDER, sensitivity)) sensitivity = l.sensitivity;
    if (rank(TRUST_ORDER, l.trust_level) < rank(TRUST_ORDER, trust)) trust = l.trust_level;
    if (rank(INTEGRITY_ORDER, l.integrity) < rank(INTEGRITY_ORDER, integrity)) integrity = l.integrity;
  }
  let origin = own.origin;
  if (isBlankOrigin(own.origin)) {
    const distinct = new Set(sources.map((l) => l.origin).filter((o): o is string => typeof o === 'string' && o !== ''));
    if (distinct.size === 1) origin = [...distinct][0]!;
    else if (distinct.size > 1) origin = 'derived';
  }
  const declass = new Set(all.map((l) => l.declassification_authority).filter((d): d is string => typeof d === 'string' && d !== ''));
  return {
    sensitivity,
    trust_level: trust,
    integrity,
    origin,
    tenant: joinIdentity(all.map((l) => l.tenant)),
    principal: joinIdentity(all.map((l) => l.principal)),
    declassification_authority: declass.size === 1 ? [...declass][0]! : null,
  };
}

/**
 * Checks one identity label: null, or a non-empty string without edge whitespace, ≤256 chars, no control
 * characters; `mixed` only where `allowMixed`. Returns an error message, or null when valid.
 */
export function identityLabelProblem(value: unknown, allowMixed: boolean): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') return 'must be a string or null';
  if (value === '') return 'must be non-empty or null';
  if (value.trim() !== value) return 'must not start or end with whitespace';
  if ([...value].length > MAX_IDENTITY_LABEL_CHARS)
    return `must be at most ${MAX_IDENTITY_LABEL_CHARS} characters (got ${[...value].length})`;
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'must not contain control characters';
  if (!allowMixed && value === 'mixed') return '"mixed" is reserved for tenant and principal';
  return null;
}

/**
 * Validates a full label set (after a merge, or labels a host passes in). Throws `invalid_metadata`.
 *
 * @example
 * import { DEFAULT_LABELS } from '@libos/sdk';
 * requireValidLabels(DEFAULT_LABELS, 'labels');
 */
export function requireValidLabels(labels: DataLabels, field: string): DataLabels {
  const bad = (key: string, why: string) =>
    new LibosError('invalid_metadata', `${field}.${key}: ${why}`, { details: { field: `${field}.${key}` } });
  if (!(SENSITIVITY_ORDER as readonly string[]).includes(labels.sensitivity))
    throw bad('sensitivity', `must be one of ${SENSITIVITY_ORDER.join(', ')}`);
  if (!(TRUST_ORDER as readonly string[]).includes(labels.trust_level))
    throw bad('trust_level', `must be one of ${TRUST_ORDER.join(', ')}`);
  if (!(INTEGRITY_ORDER as readonly string[]).includes(labels.integrity))
    throw bad('integrity', `must be one of ${INTEGRITY_ORDER.join(', ')}`);
  for (const key of ['origin', 'tenant', 'principal', 'declassification_authority'] as const) {
    const problem = identityLabelProblem(labels[key], key === 'tenant' || key === 'principal');
    if (problem !== null) throw bad(key, problem);
  }
  return labels;
}
