import type { Right, ServiceScope } from '@libos/sdk';
import type { PermissionAnswer } from './internal/permissions.js';
import type { CapabilityRecord, DelegationSpec } from './capability-record.js';
import type { AuthorityEngine } from './engine.js';

/** The well-known service name the kernel registers the engine's service under. */
export const CAPABILITY_SERVICE_NAME = 'capabilities';

/**
 * What the authority tools call (via `ctx.service<CapabilityService>('capabilities')`), always on behalf of
 * the calling pid. The kernel must check that a model-facing delegation targets a live direct child.
 *
 * @example
 * const caps = ctx.service<CapabilityService>('capabilities');
 * const mine = await caps.list(ctx.pid);
 */
export interface CapabilityService {
  /** The pid's active, chain-valid, unexpired grants (or all with `includeInactive`). */
  list(pid: string, opts?: { readonly includeInactive?: boolean }): Promise<CapabilityRecord[]>;
  /** Delegates one of the pid's grants to `childPid` (only narrowing). */
  delegate(pid: string, parentCapId: string, childPid: string, spec: DelegationSpec): Promise<CapabilityRecord>;
  /** Checked revoke by the pid. */
  revoke(pid: string, capId: string): Promise<void>;
  /** Pre-prompt gates of a standing permission request; returns the canonical resource and rights. */
  checkPermissionRequest(
    pid: string,
    resource: string,
    rights: readonly string[],
  ): Promise<{ readonly resource: string; readonly rights: readonly Right[] }>;
  /** Installs the human's answer to the pid's request as one record (idempotent per request id). */
  applyPermissionDecision(
    req: { readonly requestId: string; readonly pid: string; readonly resource: string; readonly rights: readonly string[] },
    answer: PermissionAnswer,
  ): Promise<CapabilityRecord>;
  /** Remembers the human request the pid's permission request waits on. */
  recordPermissionRequest(pid: string, requestId: string, resource: string, rights: readonly string[], human: string): Promise<void>;
  /** The pid's latest permission request, or null. */
  latestPermissionRequest(
    pid: string,
  ): Promise<{ readonly requestId: string; readonly resource: string; readonly rights: readonly string[]; readonly human: string } | null>;
}

/** Builds the service bound to one transaction. */
export function createCapabilityService(engine: AuthorityEngine, scope: ServiceScope): CapabilityService {
  return Object.freeze({
    list: (pid: string, opts?: { readonly includeInactive?: boolean }) =>
      engine.list(scope, pid, { includeInactive: opts?.includeInactive === true }),
    delegate: (pid: string, parentCapId: string, childPid: string, spec: DelegationSpec) =>
      engine.delegate(scope, parentCapId, childPid, spec, pid),
    revoke: (pid: string, capId: string) => engine.revoke(scope, pid, capId),
    checkPermissionRequest: (pid: string, resource: string, rights: readonly string[]) =>
      engine.checkPermissionRequest(scope, pid, resource, rights),
    applyPermissionDecision: (
      req: { readonly requestId: string; readonly pid: string; readonly resource: string; readonly rights: readonly string[] },
      answer: PermissionAnswer,
    ) => engine.applyPermissionDecision(scope, req, answer),
    recordPermissionRequest: (pid: string, requestId: string, resource: string, rights: readonly string[], human: string) =>
      engine.recordPermissionRequest(scope, pid, requestId, resource, rights, human),
    latestPermissionRequest: (pid: string) => engine.latestPermissionRequest(scope, pid),
  });
}
