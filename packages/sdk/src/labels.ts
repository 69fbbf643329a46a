/**
 * Data labels: the confidentiality and integrity facts that travel with data.
 * Orders are total; `join` keeps the most restrictive of each (max sensitivity, min trust, min integrity).
 *
 * @example
 * joinLabels([{ sensitivity: 'secret' }, { sensitivity: 'public', trust_level: 'untrusted' }]);
 * // { sensitivity: 'secret', trust_level: 'untrusted', integrity: 'unknown',
 * //   origin: null, tenant: null, principal: null, declassification_authority: null }
 */
export const SENSITIVITY_ORDER = ['public', 'normal', 'confidential', 'restricted', 'secret'] as const;
export const TRUST_ORDER = ['untrusted', 'unknown', 'user_asserted', 'verified', 'trusted'] as const;
export const INTEGRITY_ORDER = ['untrusted', 'unknown', 'checked', 'verified'] as const;

export type Sensitivity = (typeof SENSITIVITY_ORDER)[number];
export type TrustLevel = (typeof TRUST_ORDER)[number];
export type Integrity = (typeof INTEGRITY_ORDER)[number];

export interface DataLabels {
  readonly sensitivity: Sensitivity;
  readonly trust_level: TrustLevel;
  readonly integrity: Integrity;
  readonly origin: string | null;
  readonly tenant: string | null;
  readonly principal: string | null;
  readonly declassification_authority: string | null;
}

/** Labels of data nobody has classified: normal sensitivity, unknown trust and integrity. */
export const DEFAULT_LABELS: DataLabels = Object.freeze({
  sensitivity: 'normal',
  trust_level: 'unknown',
  integrity: 'unknown',
  origin: null,
  tenant: null,
  principal: null,
  declassification_authority: null,
});

const rank = <T extends string>(order: readonly T[], v: T): number => order.indexOf(v);

function joinIdentity(values: readonly (string | null | undefined)[]): string | null {
  const distinct = new Set(values.filter((v): v is string => typeof v === 'string' && v !== ''));
  if (distinct.size === 0) return null;
  if (distinct.has('mixed') || distinct.size > 1) return 'mixed';
  return [...distinct][0]!;
}

function joinOrigin(values: readonly (string | null | undefined)[]): string | null {
  const distinct = new Set(values.filter((v): v is string => typeof v === 'string' && v !== '' && v !== 'local' && v !== 'unknown'));
  if (distinct.size === 0) return values.find((v) => typeof v === 'string' && v !== '') ?? null;
  return distinct.size === 1 ? [...distinct][0]! : 'derived';
}

/** Joins labels: max sensitivity, min trust, min integrity, identity widened to `mixed` when sources disagree. */
export function joinLabels(labels: readonly Partial<DataLabels>[]): DataLabels {
  const all = labels.map((l) => ({ ...DEFAULT_LABELS, ...l }));
  if (all.length === 0) return DEFAULT_LABELS;
  const sens = all.reduce(
    (a, l) => (rank(SENSITIVITY_ORDER, l.sensitivity) > rank(SENSITIVITY_ORDER, a) ? l.sensitivity : a),
    all[0]!.sensitivity,
  );
  const trust = all.reduce((a, l) => (rank(TRUST_ORDER, l.trust_level) < rank(TRUST_ORDER, a) ? l.trust_level : a), all[0]!.trust_level);
  const integ = all.reduce((a, l) => (rank(INTEGRITY_ORDER, l.integrity) < rank(INTEGRITY_ORDER, a) ? l.integrity : a), all[0]!.integrity);
  const declass = new Set(all.map((l) => l.declassification_authority));
  return {
    sensitivity: sens,
    trust_level: trust,
    integrity: integ,
    origin: joinOrigin(all.map((l) => l.origin)),
    tenant: joinIdentity(all.map((l) => l.tenant)),
    principal: joinIdentity(all.map((l) => l.principal)),
    declassification_authority: declass.size === 1 ? [...declass][0]! : null,
  };
}

/** True when `next` is at least as restrictive as `prev` in every ordered dimension (no declassification, no endorsement). */
export function isNoLessRestrictive(prev: DataLabels, next: DataLabels): boolean {
  return (
    rank(SENSITIVITY_ORDER, next.sensitivity) >= rank(SENSITIVITY_ORDER, prev.sensitivity) &&
    rank(TRUST_ORDER, next.trust_level) <= rank(TRUST_ORDER, prev.trust_level) &&
    rank(INTEGRITY_ORDER, next.integrity) <= rank(INTEGRITY_ORDER, prev.integrity)
  );
}

/** Orders two sensitivities: negative when a < b. */
export function compareSensitivity(a: Sensitivity, b: Sensitivity): number {
  return rank(SENSITIVITY_ORDER, a) - rank(SENSITIVITY_ORDER, b);
}
