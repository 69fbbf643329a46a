import { LibosError, type WaitSpec } from '@libos/sdk';
import type { CallHook } from '../call/hooks.js';
import { savePendingAction } from '../processes/pending-actions.js';
import { transition } from '../processes/transition.js';
import { createHumanRequest, getHumanRequest } from './human-queue.js';
import { resources } from '@libos/sdk';

/** The first settled-but-not-approved per-use permission request among a wait's requests, if any. */
async function rejectedApproval(db: Parameters<typeof getHumanRequest>[0], requestIds: readonly string[]) {
  for (const id of requestIds) {
    const req = await getHumanRequest(db, id);
    // Only a per-use approval (an `ask` grant met mid-call) refuses its call here; a standing request's own tool
    // (request_permission) resumes and reports the decision, a rejection included (K-19 in docs/behaviour/kernel.md).
    if (req && req.kind === 'permission' && req.details.mode === 'per_use' && (req.status === 'rejected' || req.status === 'cancelled'))
      return req;
  }
  return null;
}

/**
 * Human approval on the call path. A tool that meets an `ask` grant (`approval_required`) parks: nothing it did stays
 * (its transaction rolled back); in a transaction of its own the call is charged, a per-use permission request
 * (resource, right, the approval hash of the tool and its exact arguments) joins the human queue, the call is saved,
 * and the process waits for the answer; approval resumes the identical call once. A saved call whose approval a
 * human rejected or cancelled never runs: it is refused with `permission_denied` before it is charged.
 */
export const humanCallHook: CallHook = {
  name: 'human',
  async admitParsed(call) {
    const wait = call.entry.kind === 'saved' ? call.entry.wait : undefined;
    if (wait?.kind !== 'human') return;
    const refused = await rejectedApproval(call.deps.db, wait.request_ids);
    if (!refused) return;
    throw new LibosError('permission_denied', `${call.toolName} was not run: human request ${refused.id} was ${refused.status}`, {
      details: { request_id: refused.id, status: refused.status },
    });
  },
  park: {
    claims: (err) => err.code === 'approval_required',
    async write(call, err, scope) {
      const resource = String(err.details?.resource ?? '');
      const right = String(err.details?.right ?? '');
      const approvalHash = call.approvalHash();
      const now = scope.clock.now().toISOString();
      const prompt = `${call.pid} asks to ${right} ${resource} for ${call.toolName}`;
      const details = { mode: 'per_use', resource, rights: [right], args_hash: approvalHash, tool: call.toolName, call_id: call.callId };
      const req = await createHumanRequest(scope.store, call.pid, { kind: 'permission', prompt, details }, now);
      const wait: WaitSpec = { kind: 'human', request_ids: [req.id] };
      await savePendingAction(scope.store, { pid: call.pid, callId: call.callId, tool: call.toolName, args: call.args, wait }, now);
      await transition(scope.store, call.pid, { from: ['runnable', 'running'], to: 'waiting_human', wait }, now);
      await scope.events.emit('human_request_created', { pid: call.pid, request_id: req.id, kind: 'permission', resource, right });
      const audit = {
        args_sha256: call.argsDigest.sha256,
        args_bytes: call.argsDigest.bytes,
        approval_hash: approvalHash,
        resource,
        right,
        request_id: req.id,
      };
      await scope.audit.record({
        action: 'tool.call',
        target: resources.tool(call.toolName),
        decision: 'approval_required',
        details: audit,
      });
      return wait;
    },
  },
};
