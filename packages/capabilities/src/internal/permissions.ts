import { LibosError, type ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import { specCovers } from '../delegation.js';
import { manifestCeiling } from '../manifest.js';
import { assertRequestable, permissionEffect } from '../permission-requests.js';
import { audit, type EngineEnv } from './env.js';
import { allGrantsOf } from './grant-store.js';
import { issueTrustedImpl } from './issue.js';
import { manifestOfImpl } from './manifests.js';
import { T, dbOf, parseJsonColumn } from './store.js';
import type { PermissionAnswer } from '../engine-requests.js';

export type { PermissionAnswer } from '../engine-requests.js';

/** Pre-prompt gates of a standing request: canonical input, model limits, the manifest ceiling. */
export async function checkPermissionRequestImpl(scope: ServiceScope, pid: string, resource: string, rights: readonly string[]) {
  const req = assertRequestable(resource, rights);
  const m = await manifestOfImpl(dbOf(scope), pid);
  if (m && !manifestCeiling(m.manifest).some((c) => specCovers(c, { resource: req.resource, rights: req.rights }))) {
    throw new LibosError(
      'permission_denied',
      `request_permission: ${req.rights.join(',')} on ${req.resource} is outside the authority manifest's ceiling; a human is not asked`,
      {
        details: { resource: req.resource, rights: req.rights, manifestId: m.id },
      },
    );
  }
  return req;
}

/**
 * Installs a human's standing decision as one record for the requesting pid, issued by the responder
 * (allow / deny / ask), once per request id. Returns the record (the existing one when already installed).
 */
export async function applyPermissionDecisionImpl(
  env: EngineEnv,
  scope: ServiceScope,
  req: { readonly requestId: string; readonly pid: string; readonly resource: string; readonly rights: readonly string[] },
  answer: PermissionAnswer,
): Promise<CapabilityRecord> {
  const effect = permissionEffect(answer.approved, answer.decision);
  const existing = (await allGrantsOf(dbOf(scope), req.pid)).find((r) => r.metadata.human_request_id === req.requestId);
  if (existing) return existing;
  const { resource, rights } = assertRequestable(req.resource, req.rights);
  const record = await issueTrustedImpl(
    env,
    scope,
    { subject: req.pid, resource, rights, effect, metadata: { human_request_id: req.requestId } },
    answer.responder,
  );
  await audit(scope, 'capability.permission_policy', resource, answer.decision ?? (answer.approved ? 'always_allow' : 'always_deny'), {
    requestId: req.requestId,
    subject: req.pid,
    capId: record.id,
    effect,
    rights,
    responder: answer.responder,
  });
  return record;
}

/** Remembers which human request a pid's `request_permission` call is waiting on. */
export async function recordPermissionRequestImpl(
  env: EngineEnv,
  scope: ServiceScope,
  pid: string,
  requestId: string,
  resource: string,
  rights: readonly string[],
  human: string,
): Promise<void> {
  await dbOf(scope)
    .insertInto(T.permissionRequests)
    .values({ request_id: requestId, pid, resource, rights: JSON.stringify(rights), human, created_at: env.clock.now().toISOString() })
    .execute();
}

/** The latest permission request a pid made, or null. */
export async function latestPermissionRequestImpl(
  scope: ServiceScope,
  pid: string,
): Promise<{ readonly requestId: string; readonly resource: string; readonly rights: readonly string[]; readonly human: string } | null> {
  const row = (await dbOf(scope)
    .selectFrom(T.permissionRequests)
    .selectAll()
    .where('pid', '=', pid)
    .orderBy('created_at', 'desc')
    .orderBy('request_id', 'desc')
    .limit(1)
    .executeTakeFirst()) as { request_id: string; resource: string; rights: string; human: string } | undefined;
  return row
    ? {
        requestId: row.request_id,
        resource: row.resource,
        rights: parseJsonColumn<string[]>(row.rights, 'cap_permission_requests.rights'),
        human: row.human,
      }
    : null;
}
