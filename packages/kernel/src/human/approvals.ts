import type { CapabilityRecord } from '@libos/capabilities';
import { LibosError, type HumanRequest, type Right } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { KernelScope } from '../store/kernel-scope.js';

/**
 * Permission requests come in two modes:
 * - `per_use`: a tool's effect met an `ask` grant. Approval installs a one-use allow bound to the exact
 *   arguments' hash (changed arguments must be asked again); the saved call then resumes once.
 * - `standing`: `request_permission` asked for a policy. The decision installs one record for the requester.
 * Decisions: `always_allow` (allow record), `always_deny` (deny record), `ask_each_time` (per use: the one-shot
 * approval only; standing: an ask record). Every installed record is issued by the responder.
 */
export interface PerUseDetails {
  readonly mode: 'per_use';
  readonly resource: string;
  readonly rights: readonly Right[];
  readonly args_hash: string;
  readonly tool?: string;
}

/** Installs the grant a permission decision stands for (in the answer's transaction). */
export async function installPermissionDecision(
  deps: KernelDeps,
  scope: KernelScope,
  req: HumanRequest,
  approved: boolean,
  decision: 'always_allow' | 'always_deny' | 'ask_each_time' | undefined,
  responder: string,
): Promise<CapabilityRecord[]> {
  const d = req.details as Partial<PerUseDetails> & { resource?: unknown; rights?: unknown };
  if (typeof d.resource !== 'string' || !Array.isArray(d.rights))
    throw new LibosError('internal_error', `human request ${req.id} is a permission request without resource and rights`);
  if (d.mode !== 'per_use') {
    // A standing request (request_permission): the engine installs exactly one record per request.
    return [
      await deps.engine.applyPermissionDecision(
        scope,
        { requestId: req.id, pid: req.pid, resource: d.resource, rights: d.rights as string[] },
        { approved, ...(decision ? { decision } : {}), responder },
      ),
    ];
  }
  const chosen = decision ?? 'ask_each_time';
  const installed: CapabilityRecord[] = [];
  const issue = async (effect: 'allow' | 'deny') =>
    installed.push(
      await deps.engine.issueTrusted(
        scope,
        {
          subject: req.pid,
          resource: d.resource as string,
          rights: d.rights as Right[],
          effect,
          metadata: { human_request: req.id, decision: chosen },
        },
        responder,
      ),
    );
  if (chosen === 'always_allow') await issue('allow');
  else if (chosen === 'always_deny') await issue('deny');
  else if (approved) {
    if (!d.args_hash) throw new LibosError('internal_error', `per-use permission request ${req.id} has no arguments hash`);
    for (const right of d.rights as Right[])
      installed.push(await deps.engine.approveOnce(scope, req.pid, d.resource, right, { canonicalArgsHash: d.args_hash }, responder));
  }
  await scope.audit.record({
    action: 'capability.permission_policy',
    target: d.resource,
    decision: chosen,
    details: { request_id: req.id, pid: req.pid, mode: 'per_use', approved, rights: d.rights, installed: installed.map((c) => c.id) },
  });
  return installed;
}
