import { LibosError, type Effect, type Right } from '@libos/sdk';
import type { ConstraintRegistry } from '../constraints.js';
import { parseExpiry } from '../expiry.js';
import { parseResource, type ParsedResource } from '../resource.js';
import { parseRights } from '../rights.js';

/** A validated grant spec. `undefined` on expiry, maxDepth and constraints means "omitted" (inherit on delegation). */
export interface GrantDraft {
  readonly subject: string;
  readonly resource: ParsedResource;
  readonly rights: readonly Right[];
  readonly effect: Effect;
  readonly usesRemaining: number | null;
  readonly expiresAt: string | null | undefined;
  readonly delegable: boolean;
  readonly revocable: boolean;
  readonly maxDepth: number | null | undefined;
  readonly constraints: Readonly<Record<string, unknown>> | undefined;
  readonly metadata: Readonly<Record<string, string>>;
}

const EFFECTS: readonly Effect[] = ['allow', 'deny', 'ask'];
export const MAX_USES = 1_000_000;
export const MAX_DEPTH_LIMIT = 16;

const bad = (field: string, msg: string) => new LibosError('capability_invalid', `${field}: ${msg}`, { details: { field } });

/** Validates a subject (a pid or another principal string). */
export function parseSubject(value: unknown, field = 'subject'): string {
  // eslint-disable-next-line no-control-regex
  if (typeof value !== 'string' || value.length === 0 || value.length > 256 || /[\s\u0000-\u001f]/.test(value)) {
    throw bad(field, 'must be a non-empty string of at most 256 characters without whitespace');
  }
  return value;
}

function parseMetadata(value: unknown): Readonly<Record<string, string>> {
  if (value === undefined || value === null) return Object.freeze({});
  if (typeof value !== 'object' || Array.isArray(value)) throw bad('metadata', 'must be an object of strings');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > 32) throw bad('metadata', `at most 32 keys (got ${entries.length})`);
  for (const [k, v] of entries) {
    if (k.length === 0 || k.length > 64) throw bad('metadata', `key ${JSON.stringify(k.slice(0, 64))} must be 1..64 characters`);
    if (typeof v !== 'string' || v.length > 1024) throw bad(`metadata.${k}`, 'must be a string of at most 1024 characters');
  }
  return Object.freeze(Object.fromEntries(entries) as Record<string, string>);
}

/**
 * Validates a grant spec at issue/delegation time. Expiry must parse and lie in the future;
 * `usesRemaining` only on allow; `maxDepth` an integer 0..16.
 */
export function parseDraft(
  spec: Record<string, unknown>,
  registry: ConstraintRegistry,
  now: Date,
  subject: unknown = spec.subject,
): GrantDraft {
  if (typeof spec !== 'object' || spec === null) throw bad('spec', 'must be an object');
  const known = [
    'subject',
    'resource',
    'rights',
    'effect',
    'usesRemaining',
    'expiresAt',
    'delegable',
    'revocable',
    'maxDepth',
    'constraints',
    'metadata',
  ];
  for (const k of Object.keys(spec)) if (!known.includes(k)) throw bad(k, 'unknown grant field');
  const resource = parseResource(spec.resource);
  const rights = parseRights(spec.rights);
  const effect = spec.effect === undefined ? 'allow' : (spec.effect as Effect);
  if (!EFFECTS.includes(effect)) throw bad('effect', `must be allow, deny or ask (got ${JSON.stringify(spec.effect)})`);
  let usesRemaining: number | null = null;
  if (spec.usesRemaining !== undefined && spec.usesRemaining !== null) {
    const u = spec.usesRemaining;
    if (typeof u !== 'number' || !Number.isInteger(u) || u < 1 || u > MAX_USES)
      throw bad('usesRemaining', `must be an integer 1..${MAX_USES} (got ${String(u)})`);
    if (effect !== 'allow') throw bad('usesRemaining', `only an allow grant may carry finite uses (effect is ${effect})`);
    usesRemaining = u;
  }
  let expiresAt: string | null | undefined;
  if (spec.expiresAt === undefined) expiresAt = undefined;
  else if (spec.expiresAt === null) expiresAt = null;
  else {
    expiresAt = parseExpiry(spec.expiresAt);
    if (Date.parse(expiresAt) <= now.getTime())
      throw bad('expiresAt', `must be in the future (got ${expiresAt}, now ${now.toISOString()})`);
  }
  for (const k of ['delegable', 'revocable'] as const)
    if (spec[k] !== undefined && typeof spec[k] !== 'boolean') throw bad(k, 'must be a boolean');
  let maxDepth: number | null | undefined;
  if (spec.maxDepth === undefined) maxDepth = undefined;
  else if (spec.maxDepth === null) maxDepth = null;
  else {
    const d = spec.maxDepth;
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0 || d > MAX_DEPTH_LIMIT)
      throw bad('maxDepth', `must be an integer 0..${MAX_DEPTH_LIMIT} (got ${String(d)})`);
    maxDepth = d;
  }
  return Object.freeze({
    subject: parseSubject(subject),
    resource,
    rights,
    effect,
    usesRemaining,
    expiresAt,
    delegable: spec.delegable === true,
    revocable: spec.revocable !== false,
    maxDepth,
    constraints: spec.constraints === undefined ? undefined : registry.validate(spec.constraints),
    metadata: parseMetadata(spec.metadata),
  });
}
