import {
  DEFAULT_LABELS,
  INTEGRITY_ORDER,
  JSON_LIMITS,
  LibosError,
  SENSITIVITY_ORDER,
  TRUST_ORDER,
  compareSensitivity,
  joinLabels,
  type DataLabels,
} from '@libos/sdk';

const LABEL_KEYS = ['sensitivity', 'trust_level', 'integrity', 'origin', 'tenant', 'principal', 'declassification_authority'] as const;

/**
 * Validates partial labels: closed keys, ordered values from their orders, identity strings ≤ 256 (or null).
 * `mixed` is only legal where it came from a join (`allowMixed`). Throws `invalid_arguments` naming the field.
 *
 * @example
 * parseLabels({ sensitivity: 'secret' }); // { sensitivity: 'secret' }
 */
export function parseLabels(value: unknown, opts: { readonly allowMixed?: boolean; readonly field?: string } = {}): Partial<DataLabels> {
  const field = opts.field ?? 'labels';
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new LibosError('invalid_arguments', `${field}: must be an object`, { details: { field } });
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    const f = `${field}.${k}`;
    if (!(LABEL_KEYS as readonly string[]).includes(k))
      throw new LibosError('invalid_arguments', `${f}: unknown label (known: ${LABEL_KEYS.join(', ')})`, { details: { field: f } });
    const order = k === 'sensitivity' ? SENSITIVITY_ORDER : k === 'trust_level' ? TRUST_ORDER : k === 'integrity' ? INTEGRITY_ORDER : null;
    if (order) {
      if (!(order as readonly unknown[]).includes(v))
        throw new LibosError('invalid_arguments', `${f}: must be one of ${order.join(', ')} (got ${JSON.stringify(v)})`, {
          details: { field: f },
        });
    } else if (v !== null) {
      if (typeof v !== 'string' || v.length === 0 || v.length > 256)
        throw new LibosError('invalid_arguments', `${f}: must be a string of 1..256 characters or null`, { details: { field: f } });
      if (v === 'mixed' && !opts.allowMixed && (k === 'tenant' || k === 'principal'))
        throw new LibosError('invalid_arguments', `${f}: "mixed" only results from a join`, { details: { field: f } });
    }
    out[k] = v;
  }
  return out as Partial<DataLabels>;
}

/** Labels of unclassified external input (tool output from outside, human text): normal and untrusted. */
export const UNCLASSIFIED_EXTERNAL_LABELS: Partial<DataLabels> = Object.freeze({
  sensitivity: 'normal',
  trust_level: 'untrusted',
  integrity: 'untrusted',
  origin: 'external',
});

/** Full labels from partial ones (defaults for what is missing). */
export function completeLabels(partial: Partial<DataLabels>): DataLabels {
  return Object.freeze({ ...DEFAULT_LABELS, ...partial });
}

/**
 * Guards a model-facing label request: a model may raise sensitivity and set or mix tenant/principal
 * (by join), may set trust/integrity only to `untrusted`/`unknown`, never sets `declassification_authority`
 * or `origin`, and never asks for less sensitivity than the current flow. Throws `label_elevation_denied`.
 * Returns the labels to store: `join(flow, requested)`.
 *
 * @example
 * const flowLabels: DataLabels = { ...DEFAULT_LABELS, sensitivity: 'confidential' }; // what the process has read so far
 * assertModelLabels({ sensitivity: 'secret' }, flowLabels);   // joined labels, at least as restrictive
 * assertModelLabels({ trust_level: 'trusted' }, flowLabels);  // throws label_elevation_denied
 */
export function assertModelLabels(requested: unknown, current: DataLabels = DEFAULT_LABELS): DataLabels {
  const req = parseLabels(requested, { field: 'labels' });
  const deny = (field: string, msg: string) =>
    new LibosError('label_elevation_denied', `labels.${field}: ${msg}`, { details: { field: `labels.${field}` } });
  if (req.trust_level !== undefined && TRUST_ORDER.indexOf(req.trust_level) > TRUST_ORDER.indexOf('unknown'))
    throw deny('trust_level', `a model may set only untrusted or unknown (asked ${req.trust_level}); trust comes from provenance`);
  if (req.integrity !== undefined && INTEGRITY_ORDER.indexOf(req.integrity) > INTEGRITY_ORDER.indexOf('unknown'))
    throw deny('integrity', `a model may set only untrusted or unknown (asked ${req.integrity}); integrity comes from provenance`);
  if (req.declassification_authority !== undefined && req.declassification_authority !== null)
    throw deny('declassification_authority', 'is never model-settable; declassification is a capability');
  if (req.origin !== undefined && req.origin !== null) throw deny('origin', 'is derived by the runtime, never model-settable');
  if (req.sensitivity !== undefined && compareSensitivity(req.sensitivity, current.sensitivity) < 0) {
    throw deny(
      'sensitivity',
      `${req.sensitivity} is below the current flow's ${current.sensitivity}; lowering needs a declassification grant`,
    );
  }
  return joinLabels([current, req]);
}

const GRANT_KEYS = new Set([
  'grant',
  'grants',
  'capability',
  'capabilities',
  'authorized_capabilities',
  'capability_grant',
  'issue_capability',
  'permissions',
  'declassification_authority',
  'issuer_cap_id',
  'issuercapid',
  'parent_cap_id',
  'parentcapid',
  'uses_remaining',
  'usesremaining',
]);

/**
 * Refuses a model-facing payload (object metadata, tool arguments other than the authority tools)
 * that tries to mint authority: any grant-shaped object (`resource` with `rights`/`right`/`effect`)
 * or a grant/capability key, at any depth. Throws `delegation_denied`.
 *
 * @example
 * assertNotMintingGrant({ title: 'notes' });                                        // ok
 * assertNotMintingGrant({ grants: [{ resource: 'object:*', rights: ['admin'] }] }); // throws
 */
export function assertNotMintingGrant(payload: unknown, field = 'payload'): void {
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: payload, path: field, depth: 0 }];
  let visited = 0;
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (++visited > JSON_LIMITS.nodes || depth > JSON_LIMITS.depth) {
      const bound = `at most ${JSON_LIMITS.depth} levels, ${JSON_LIMITS.nodes} values`;
      throw new LibosError('invalid_arguments', `${field}: too deep or too large to inspect (${bound})`, { details: { field } });
    }
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) stack.push({ v: x, path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if ('resource' in o && ('rights' in o || 'right' in o || 'effect' in o)) {
      throw new LibosError(
        'delegation_denied',
        `${path}: a model-facing payload cannot mint a grant (grant-shaped object with resource and rights)`,
        { details: { field: path, reason: 'grant_minting' } },
      );
    }
    for (const k of keys) {
      if (GRANT_KEYS.has(k.toLowerCase())) {
        throw new LibosError(
          'delegation_denied',
          `${path}.${k}: a model-facing payload cannot mint or carry grants; authority comes only from capabilities`,
          { details: { field: `${path}.${k}`, reason: 'grant_minting' } },
        );
      }
      stack.push({ v: o[k], path: `${path}.${k}`, depth: depth + 1 });
    }
  }
}

/**
 * Labels of an Object a model asks to create: the model request is guarded by `assertModelLabels`
 * against the current flow, then joined with every explicit parent, so a public request over a secret
 * parent is stored secret.
 *
 * @example
 * // sensitivity 'secret':
 * deriveObjectLabels({ requested: { sensitivity: 'normal' }, parents: [{ sensitivity: 'secret' }], flow: DEFAULT_LABELS });
 */
export function deriveObjectLabels(input: {
  readonly requested?: unknown;
  readonly parents?: readonly Partial<DataLabels>[];
  readonly flow?: DataLabels;
}): DataLabels {
  const flow = input.flow ?? DEFAULT_LABELS;
  const base = input.requested === undefined ? flow : assertModelLabels(input.requested, flow);
  return joinLabels([base, ...(input.parents ?? []).map((p) => parseLabels(p, { allowMixed: true, field: 'parents[]' }))]);
}
