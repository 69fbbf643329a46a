import { BUDGET_FIELDS, LibosError, RIGHTS, canonicalJson, canonicalSha256, z, type BudgetField, type Right } from '@libos/sdk';
import type { BudgetLimits } from './budgets.js';
import type { DelegationSpec } from './capability-record.js';
import { specCovers } from './delegation.js';
import { expiryMillis, parseExpiry } from './expiry.js';

const iso = z.string().max(64);
const capability = z
  .object({
    resource: z.string().min(1).max(2048),
    rights: z.array(z.enum(RIGHTS)).min(1).max(16),
    constraints: z.record(z.string(), z.unknown()).optional(),
    delegable: z.boolean().optional(),
    revocable: z.boolean().optional(),
    expires_at: iso.optional(),
    uses_remaining: z.number().int().min(1).max(1_000_000).optional(),
    max_delegation_depth: z.number().int().min(0).max(16).optional(),
  })
  .strict();
const effectPattern = z.string().regex(/^(\*|[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?)$/, 'an effect name, "name.*" or "*"');
const budget = z
  .object(
    Object.fromEntries(BUDGET_FIELDS.map((f) => [f, z.number().finite().min(0).nullable().optional()])) as Record<
      BudgetField,
      z.ZodOptional<z.ZodNullable<z.ZodNumber>>
    >,
  )
  .strict();
const names = z
  .array(
    z
      .string()
      .min(1)
      .max(256)
      .refine((s) => s !== 'mixed', 'mixed is not a tenant'),
  )
  .max(256);

/** The closed schema of a Task Authority Manifest (docs/behaviour/capabilities.md); unknown fields reject. */
export const manifestSchema = z
  .object({
    authorized_capabilities: z.array(capability).max(256),
    permitted_effects: z.array(effectPattern).max(256).nullable(),
    resource_budget: budget.default({}),
    approval_policy: z
      .object({ requestable_capabilities: z.array(capability).max(256).default([]) })
      .strict()
      .default({ requestable_capabilities: [] }),
    data_flow_policy: z
      .object({ allowed_tenants: names.default([]), allowed_principals: names.default([]) })
      .strict()
      .default({ allowed_tenants: [], allowed_principals: [] }),
    expires_at: iso.nullable().default(null),
    issued_by: z.string().min(1).max(256),
    metadata: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export type AuthorityManifest = z.output<typeof manifestSchema>;
export type ManifestCapability = z.output<typeof capability>;

/** A validated manifest with its identity (sha256 of canonical JSON). */
export interface ParsedManifest {
  readonly manifest: AuthorityManifest;
  readonly sha256: string;
  /** `tam_<16 hex>` from the hash. */
  readonly id: string;
}

/**
 * Parses a Host-authored manifest: closed schema, canonical expiries. Throws `invalid_arguments` naming the path.
 *
 * @example
 * const { manifest, sha256 } = parseManifest({ authorized_capabilities: [], permitted_effects: null, issued_by: 'host' });
 */
export function parseManifest(value: unknown): ParsedManifest {
  const r = manifestSchema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0]!;
    const path = ['manifest', ...i.path.map(String)].join('.');
    throw new LibosError('invalid_arguments', `${path}: ${i.message}`, { details: { field: path } });
  }
  const m = r.data;
  const fixExp = (c: ManifestCapability, path: string): ManifestCapability =>
    c.expires_at === undefined ? c : { ...c, expires_at: parseExpiry(c.expires_at, path) };
  const manifest: AuthorityManifest = {
    ...m,
    authorized_capabilities: m.authorized_capabilities.map((c, i) => fixExp(c, `manifest.authorized_capabilities.${i}.expires_at`)),
    approval_policy: {
      requestable_capabilities: m.approval_policy.requestable_capabilities.map((c, i) =>
        fixExp(c, `manifest.approval_policy.requestable_capabilities.${i}.expires_at`),
      ),
    },
    expires_at: m.expires_at === null ? null : parseExpiry(m.expires_at, 'manifest.expires_at'),
  };
  const sha256 = canonicalSha256(manifest);
  return Object.freeze({ manifest, sha256, id: `tam_${sha256.slice(0, 16)}` });
}

/** A manifest capability as a delegation spec. */
export function manifestSpec(c: ManifestCapability): DelegationSpec {
  return {
    resource: c.resource,
    rights: c.rights as Right[],
    ...(c.constraints !== undefined ? { constraints: c.constraints } : {}),
    ...(c.delegable !== undefined ? { delegable: c.delegable } : {}),
    ...(c.expires_at !== undefined ? { expiresAt: c.expires_at } : {}),
    ...(c.uses_remaining !== undefined ? { usesRemaining: c.uses_remaining } : {}),
    ...(c.max_delegation_depth !== undefined ? { maxDepth: c.max_delegation_depth } : {}),
  };
}

/** The request ceiling: authorized ∪ requestable specs (what `requestPermission` and derivations may not exceed). */
export function manifestCeiling(m: AuthorityManifest): DelegationSpec[] {
  return [...m.authorized_capabilities, ...m.approval_policy.requestable_capabilities].map(manifestSpec);
}

/** True when `effect` (e.g. `filesystem.write`) is permitted: null = unrestricted, [] = none, exact or terminal `.*`/`*`. */
export function effectPermitted(m: AuthorityManifest, effect: string): boolean {
  if (m.permitted_effects === null) return true;
  return m.permitted_effects.some((p) => p === '*' || p === effect || (p.endsWith('.*') && effect.startsWith(p.slice(0, -1))));
}

/** True while the manifest has not expired (`expires_at <= now` ⇒ expired ⇒ deny). */
export function manifestActive(m: AuthorityManifest, now: Date): boolean {
  return m.expires_at === null || (expiryMillis(m.expires_at) ?? -Infinity) > now.getTime();
}

const effectCovered = (parent: readonly string[], e: string) =>
  parent.some((p) => p === '*' || p === e || (p.endsWith('.*') && (e === p || (e.startsWith(p.slice(0, -1)) && e !== p.slice(0, -2)))));

/**
 * A child manifest may only narrow its parent's: specs covered, budget ≤, effects ⊆ (never back to
 * null), expiry ≤, tenants/principals ⊆, approval policy unchanged. Throws `delegation_denied` naming the field.
 */
export function assertChildManifest(parent: AuthorityManifest, child: AuthorityManifest): void {
  const deny = (field: string, msg: string) =>
    new LibosError('delegation_denied', `manifest.${field}: ${msg}`, { details: { field: `manifest.${field}` } });
  child.authorized_capabilities.forEach((c, i) => {
    if (!parent.authorized_capabilities.some((p) => specCovers(manifestSpec(p), manifestSpec(c))))
      throw deny(`authorized_capabilities.${i}`, `${c.resource} ${c.rights.join(',')} is not covered by the parent manifest`);
  });
  for (const f of BUDGET_FIELDS) {
    const p = parent.resource_budget[f];
    const c = child.resource_budget[f];
    if (p === null || p === undefined) continue;
    if (c === null || c === undefined || c > p) throw deny(`resource_budget.${f}`, `${c ?? 'unlimited'} exceeds the parent's ${p}`);
  }
  if (parent.permitted_effects !== null) {
    if (child.permitted_effects === null) throw deny('permitted_effects', 'cannot widen to unrestricted (null) under a restricted parent');
    for (const e of child.permitted_effects)
      if (!effectCovered(parent.permitted_effects, e)) throw deny('permitted_effects', `${e} is not permitted by the parent`);
  }
  if (parent.expires_at !== null && (child.expires_at === null || child.expires_at > parent.expires_at))
    throw deny('expires_at', `${child.expires_at ?? 'never'} is later than the parent's ${parent.expires_at}`);
  for (const k of ['allowed_tenants', 'allowed_principals'] as const) {
    const extra = child.data_flow_policy[k].filter((t) => !parent.data_flow_policy[k].includes(t));
    if (extra.length > 0) throw deny(`data_flow_policy.${k}`, `${extra.join(', ')} not allowed by the parent`);
  }
  if (canonicalJson(child.approval_policy) !== canonicalJson(parent.approval_policy))
    throw deny('approval_policy', "must equal the parent manifest's");
}

/** Budget limits a manifest sets (for `openAccount`). */
export function manifestBudget(m: AuthorityManifest): BudgetLimits {
  return { ...m.resource_budget };
}

/** True when labelled data may be received under the manifest's data-flow policy (no `mixed`; empty ⇒ untagged only). */
export function receivePermitted(
  m: AuthorityManifest,
  labels: { readonly tenant: string | null; readonly principal: string | null },
): boolean {
  const ok = (v: string | null, allowed: readonly string[]) => v === null || (v !== 'mixed' && allowed.includes(v));
  return ok(labels.tenant, m.data_flow_policy.allowed_tenants) && ok(labels.principal, m.data_flow_policy.allowed_principals);
}
