import type { CapabilityRecord } from '@libos/capabilities';
import { LibosError, type HumanRequest, type Right } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { TxScope } from '../store/transaction.js';

/**
 * Permission requests come in two modes:
 * - `per_use`: a tool's effect met an `ask` grant. Approval installs a one-use allow bound to the exact
 *   arguments' hash (changed arguments must be asked again); the saved call then resumes once.
 * - `standing`: `request_permission` asked for a policy. The decision installs one record for the requester.
 * Decisions: `always_allow` (allow record), `always_deny` (deny record), `ask_each_time` (per use: the one-shot
 * approval only; standing: an ask record). Every installed record is issued by the responder.
 */
export interface PermissionDetails {
  readonly mode: 'per_use' | 'standing';
  readonly resource: string;
  readonly rights: readonly Right[];
  readonly args_hash?: string;
  readonly tool?: string;
  readonly reason?: string;
}

export function permissionDetails(req: HumanRequest): PermissionDetails {
  const d = req.details as Partial<PermissionDetails>;
  if ((d.mode !== 'per_use' && d.mode !== 'standing') || typeof d.resource !== 'string' || !Array.isArray(d.rights)) {
    throw new LibosError('internal_error', `human request ${req.id} is a permission request without valid details`);
  }
  return d as PermissionDetails;
}

/** Installs the grant a permission decision stands for (in the answer's transaction). */
export async function installPermissionDecision(
  deps: KernelDeps,
  scope: TxScope,
  req: HumanRequest,
  approved: boolean,
  decision: 'always_allow' | 'always_deny' | 'ask_each_time' | undefined,
  responder: string,
): Promise<CapabilityRecord[]> {
  const d = permissionDetails(req);
  const chosen = decision ?? (d.mode === 'per_use' ? 'ask_each_time' : approved ? 'always_allow' : 'always_deny');
  const installed: CapabilityRecord[] = [];
  const issue = async (effect: 'allow' | 'deny' | 'ask') =>
    installed.push(await deps.engine.issueTrusted(scope, { subject: req.pid, resource: d.resource, rights: d.rights, effect, metadata: { human_request: req.id, decision: chosen } }, responder));
  if (chosen === 'always_allow') await issue('allow');
  else if (chosen === 'always_deny') await issue('deny');
  else if (d.mode === 'standing') await issue('ask');
  else if (approved) {
    if (!d.args_hash) throw new LibosError('internal_error', `per-use permission request ${req.id} has no arguments hash`);
    for (const right of d.rights) installed.push(await deps.engine.approveOnce(scope, req.pid, d.resource, right, { canonicalArgsHash: d.args_hash }, responder));
  }
  await scope.audit.record({ action: 'capability.permission_policy', target: d.resource, decision: chosen, details: { request_id: req.id, pid: req.pid, mode: d.mode, approved, rights: d.rights, installed: installed.map((c) => c.id) } });
  return installed;
}
