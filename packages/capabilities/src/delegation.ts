import { LibosError, canonicalJson, type GrantSpec } from '@libos/sdk';
import { DEFAULT_MAX_DEPTH, type CapabilityRecord } from './capability-record.js';
import type { ConstraintRegistry } from './constraints.js';
import { expiryMillis } from './expiry.js';
import type { GrantDraft } from './internal/grant-draft.js';
import { covers, parseResource } from './resource.js';

/** The fields a delegated record gets from its parent after attenuation. */
export interface AttenuatedShape {
  readonly expiresAt: string | null;
  readonly maxDepth: number | null;
  readonly constraints: Readonly<Record<string, unknown>>;
  readonly depth: number;
}

const denied = (field: string, msg: string, details: Record<string, unknown> = {}) =>
  new LibosError('delegation_denied', `${field}: ${msg}`, { details: { field, ...details } });

const effectiveMax = (m: number | null): number => m ?? DEFAULT_MAX_DEPTH;

/**
 * Checks that a child drafted from `parent` only narrows it (a delegation) and returns the inherited fields.
 * Throws `delegation_denied` naming the field and the bound. `requireDelegable: false` is the checked-issue
 * transfer path (a covering `grant` right stands in for the parent's delegability).
 *
 * @example
 * declare const parent: CapabilityRecord, draft: GrantDraft, registry: ConstraintRegistry;
 * const shape = checkAttenuation(parent, draft, registry); // { expiresAt, maxDepth, constraints, depth }
 */
export function checkAttenuation(
  parent: CapabilityRecord,
  draft: GrantDraft,
  registry: ConstraintRegistry,
  opts: { readonly requireDelegable?: boolean } = {},
): AttenuatedShape {
  if (parent.effect !== 'allow')
    throw denied('parent', `${parent.id} is a ${parent.effect} record; only allow records can be delegated`, { parentCapId: parent.id });
  if (opts.requireDelegable !== false && !parent.delegable)
    throw denied('parent', `${parent.id} is not delegable`, { parentCapId: parent.id });
  if (parent.usesRemaining !== null)
    throw denied('parent', `${parent.id} has finite uses (${parent.usesRemaining}); finite grants never pass on`, {
      parentCapId: parent.id,
    });
  if (!covers(parent.resource, draft.resource))
    throw denied('resource', `${draft.resource.canonical} is not within the parent's ${parent.resource}`, { parentCapId: parent.id });
  const extra = draft.rights.filter((r) => !parent.rights.includes(r));
  if (extra.length > 0)
    throw denied('rights', `${extra.join(', ')} not held by the parent (holds ${parent.rights.join(', ')})`, { parentCapId: parent.id });
  let expiresAt: string | null;
  if (draft.expiresAt === undefined) expiresAt = parent.expiresAt;
  else if (draft.expiresAt === null) {
    if (parent.expiresAt !== null)
      throw denied('expiresAt', `must not outlive the parent (parent expires ${parent.expiresAt}, child asks for no expiry)`);
    expiresAt = null;
  } else {
    if (parent.expiresAt !== null && Date.parse(draft.expiresAt) > (expiryMillis(parent.expiresAt) ?? -Infinity)) {
      throw denied('expiresAt', `${draft.expiresAt} is later than the parent's ${parent.expiresAt}`);
    }
    expiresAt = draft.expiresAt;
  }
  const constraints = draft.constraints ?? parent.constraints;
  for (const [k, v] of Object.entries(parent.constraints)) {
    if (!(k in constraints) || canonicalJson(constraints[k]) !== canonicalJson(v))
      throw denied(`constraints.${k}`, 'every parent constraint must be kept with an equal value');
  }
  for (const k of Object.keys(constraints)) {
    if (k in parent.constraints) continue;
    const e = registry.get(k);
    if (!e) throw denied(`constraints.${k}`, 'unknown constraint key');
    if (e.notAddableByDelegation) throw denied(`constraints.${k}`, 'may be kept but never added by delegation');
  }
  if (draft.delegable && !parent.delegable) throw denied('delegable', `the parent ${parent.id} is not delegable`);
  const pMax = effectiveMax(parent.maxDepth);
  if (parent.depth >= pMax) throw denied('depth', `parent depth ${parent.depth} has reached its maxDepth ${pMax}`);
  const maxDepth = draft.maxDepth === undefined ? parent.maxDepth : draft.maxDepth;
  if (effectiveMax(maxDepth) > pMax) throw denied('maxDepth', `${effectiveMax(maxDepth)} exceeds the parent's maxDepth ${pMax}`);
  const depth = parent.depth + 1;
  if (draft.delegable && depth >= effectiveMax(maxDepth))
    throw denied('delegable', `a delegable child at depth ${depth} needs maxDepth > ${depth} (has ${effectiveMax(maxDepth)})`);
  return Object.freeze({ expiresAt, maxDepth, constraints, depth });
}

/**
 * `specCovers(P, C)`: a ceiling spec `P` admits child spec `C` — resource covered, rights a subset,
 * every P constraint kept, expiry no later, equal finite uses, delegability and depth no wider.
 *
 * @example
 * specCovers({ resource: 'object:*', rights: ['read', 'write'] }, { resource: 'object:a', rights: ['read'] }); // true
 */
export function specCovers(p: Omit<GrantSpec, 'subject'>, c: Omit<GrantSpec, 'subject'>): boolean {
  if (!covers(parseResource(p.resource), parseResource(c.resource))) return false;
  if (!c.rights.every((r) => p.rights.includes(r))) return false;
  if ((c.effect ?? 'allow') === 'allow' && (p.effect ?? 'allow') !== 'allow') return false;
  for (const [k, v] of Object.entries(p.constraints ?? {})) {
    const cv = c.constraints?.[k];
    if (cv === undefined || canonicalJson(cv) !== canonicalJson(v)) return false;
  }
  if (p.expiresAt !== undefined) {
    if (c.expiresAt === undefined) return false;
    const pe = expiryMillis(p.expiresAt);
    const ce = expiryMillis(c.expiresAt);
    if (pe === null || ce === null || ce > pe) return false;
  }
  if (p.usesRemaining !== undefined && c.usesRemaining !== p.usesRemaining) return false;
  if (c.delegable === true && p.delegable !== true) return false;
  if (effectiveMax(c.maxDepth ?? null) > effectiveMax(p.maxDepth ?? null)) return false;
  return true;
}
