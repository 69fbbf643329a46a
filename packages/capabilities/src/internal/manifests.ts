import { LibosError, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import {
  assertChildManifest,
  effectPermitted,
  manifestActive,
  manifestSpec,
  parseManifest,
  type AuthorityManifest,
  type ParsedManifest,
} from '../manifest.js';
import { audit, type EngineEnv } from './env.js';
import { parseDraft } from './grant-draft.js';
import { issueTrustedImpl } from './issue.js';
import { T, dbOf, parseJsonColumn, type Db } from './store.js';
import type { BindOptions } from '../engine-requests.js';

export type { BindOptions } from '../engine-requests.js';

/** The manifest bound to a pid, or null. */
export async function manifestOfImpl(db: Db, pid: string): Promise<ParsedManifest | null> {
  const row = (await db.selectFrom(T.manifests).selectAll().where('pid', '=', pid).executeTakeFirst()) as
    | { manifest_id: string; sha256: string; manifest: string }
    | undefined;
  if (!row) return null;
  return { manifest: parseJsonColumn<AuthorityManifest>(row.manifest, 'cap_manifests.manifest'), sha256: row.sha256, id: row.manifest_id };
}

/**
 * Binds one manifest to a pid (one per process) and compiles its authorized capabilities into grants issued by
 * `authority_manifest:<id>` (expiry capped by the manifest's). Everything validates before anything is written.
 */
export async function bindManifestImpl(
  env: EngineEnv,
  scope: ServiceScope,
  pid: string,
  value: unknown,
  opts: BindOptions = {},
): Promise<{ manifest: ParsedManifest; records: CapabilityRecord[] }> {
  const db = dbOf(scope);
  const parsed = parseManifest(value);
  const m = parsed.manifest;
  if (await manifestOfImpl(db, pid))
    throw new LibosError('conflict', `pid: ${pid} already has an authority manifest`, { details: { field: 'pid', pid } });
  if (!manifestActive(m, env.clock.now()))
    throw new LibosError('invalid_arguments', `manifest.expires_at: ${m.expires_at} has passed`, {
      details: { field: 'manifest.expires_at' },
    });
  if (opts.parentPid) {
    const parent = await manifestOfImpl(db, opts.parentPid);
    if (parent) assertChildManifest(parent.manifest, m);
  }
  const specs = m.authorized_capabilities.map((c) => {
    const spec = manifestSpec(c);
    const cap = m.expires_at !== null && (spec.expiresAt === undefined || spec.expiresAt > m.expires_at) ? m.expires_at : spec.expiresAt;
    const full = { ...spec, subject: pid, ...(cap !== undefined ? { expiresAt: cap } : {}), revocable: c.revocable ?? true };
    parseDraft(full as unknown as Record<string, unknown>, env.registry, env.clock.now());
    return full;
  });
  await db
    .insertInto(T.manifests)
    .values({ pid, manifest_id: parsed.id, sha256: parsed.sha256, manifest: JSON.stringify(m), bound_at: env.clock.now().toISOString() })
    .execute();
  const records: CapabilityRecord[] = [];
  for (const spec of specs) records.push(await issueTrustedImpl(env, scope, spec, `authority_manifest:${parsed.id}`));
  await audit(scope, 'authority_manifest.bind', pid, 'bound', {
    pid,
    manifestId: parsed.id,
    manifestSha256: parsed.sha256,
    parentPid: opts.parentPid ?? null,
    capIds: records.map((r) => r.id),
    permittedEffects: m.permitted_effects,
    imageRequirementsDeclared: (opts.imageRequirements ?? []).map((r) => ({ resource: r.resource, rights: r.rights })),
  });
  return { manifest: parsed, records };
}

/** Whether `pid` may perform `effect` at a provider boundary: no manifest ⇒ unrestricted; expired ⇒ none. */
export async function effectPermittedImpl(env: EngineEnv, scope: ServiceScope, pid: string, effect: string): Promise<boolean> {
  const m = await manifestOfImpl(dbOf(scope), pid);
  if (!m) return true;
  return manifestActive(m.manifest, env.clock.now()) && effectPermitted(m.manifest, effect);
}
