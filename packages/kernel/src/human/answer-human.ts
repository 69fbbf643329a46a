import { LibosError, type HumanRequest } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { waitsForHuman, wakeIfWaiting } from '../processes/wake.js';
import { inTransaction, type TxScope } from '../store/transaction.js';
import { installPermissionDecision } from './approvals.js';
import { getHumanRequest, settleHumanRequest } from './human-queue.js';
import { resources } from '@libos/sdk';

export interface HumanAnswer {
  /** Approve (answer a question / grant a permission) or reject. */
  readonly approved: boolean;
  /** The answer text of an approved question (required then). */
  readonly answer?: string;
  /** For a permission request: always_allow, always_deny or ask_each_time. */
  readonly decision?: 'always_allow' | 'always_deny' | 'ask_each_time';
  /** Who answered, e.g. `human:owner`. */
  readonly responder?: string;
}

/** Most characters of an answer's text (the HTTP server holds its bodies to the same). */
export const MAX_ANSWER_CHARS = 8_000;

const DECISIONS: readonly unknown[] = ['always_allow', 'always_deny', 'ask_each_time'];

/** A host answer comes from outside (REST, CLI, code): its fields are checked before anything is read or written. */
function assertAnswerShape(a: HumanAnswer): void {
  const bad = (field: string, why: string) => new LibosError('invalid_arguments', `${field}: ${why}`, { details: { field } });
  if (typeof a.approved !== 'boolean') throw bad('approved', `must be true or false (got ${typeof a.approved})`);
  if (a.answer !== undefined) {
    if (typeof a.answer !== 'string')
      throw bad('answer', `must be a string (got ${Array.isArray(a.answer) ? 'an array' : typeof a.answer})`);
    if (a.answer.length > MAX_ANSWER_CHARS) throw bad('answer', `must be at most ${MAX_ANSWER_CHARS} characters (got ${a.answer.length})`);
  }
  if (a.decision !== undefined && !DECISIONS.includes(a.decision)) throw bad('decision', `must be one of ${DECISIONS.join(', ')}`);
  if (a.responder !== undefined && (typeof a.responder !== 'string' || a.responder.length > 128)) {
    throw bad('responder', 'must be a string of at most 128 characters');
  }
}

/**
 * Answers a pending human request, and in the same transaction wakes its process if this settles every request
 * its wait names. Only a pending request can be answered (exactly one of two concurrent answers commits).
 */
export async function answerHuman(deps: KernelDeps, id: string, a: HumanAnswer): Promise<HumanRequest> {
  assertAnswerShape(a);
  return inTransaction(deps.db, deps.scopes, a.responder ?? 'human:owner', null, async (scope) => {
    const req = await getHumanRequest(scope.store, id);
    if (!req) throw new LibosError('human_request_not_found', `human request ${id} does not exist`, { details: { id } });
    if (req.kind === 'question' && a.approved && (typeof a.answer !== 'string' || a.answer.trim() === '')) {
      throw new LibosError('invalid_arguments', 'answer: an approved question needs a non-empty answer');
    }
    if (req.kind === 'permission') {
      if (a.decision === 'always_deny' && a.approved)
        throw new LibosError('invalid_arguments', 'decision: always_deny contradicts approved=true');
      if (a.decision === 'always_allow' && !a.approved)
        throw new LibosError('invalid_arguments', 'decision: always_allow contradicts approved=false');
    }
    const response: Record<string, unknown> = { approved: a.approved, responder: a.responder ?? 'human:owner' };
    if (a.answer !== undefined) response.answer = a.answer;
    if (a.decision !== undefined) response.decision = a.decision;
    const settled = await settleHumanRequest(
      scope.store,
      id,
      a.approved ? 'approved' : 'rejected',
      response,
      scope.clock.now().toISOString(),
    );
    if (req.kind === 'permission')
      await installPermissionDecision(deps, scope, settled, a.approved, a.decision, a.responder ?? 'human:owner');
    await scope.events.emit('human_request_answered', { pid: req.pid, request_id: id, status: settled.status });
    await scope.audit.record({
      action: 'human.answer',
      target: resources.humanRequest(id),
      decision: settled.status,
      details: { pid: req.pid, kind: req.kind, decision: a.decision ?? null },
    });
    await wakeIfHumanWaitSettled(scope, req.pid, `human request ${id} ${settled.status}`);
    return settled;
  });
}

/** Wakes `pid` if it waits on human requests and none it waits on is still pending (same transaction). */
async function wakeIfHumanWaitSettled(scope: TxScope, pid: string, why: string): Promise<void> {
  const rows = await scope.store.selectFrom('human_requests').select('id').where('pid', '=', pid).where('status', '=', 'pending').execute();
  const pending = new Set(rows.map((r) => r.id));
  await wakeIfWaiting(
    scope,
    pid,
    waitsForHuman((rid) => !pending.has(rid)),
    why,
  );
}

/**
 * Cancels a pending human request (nobody will answer it) and, in the same transaction, wakes its process if that
 * settles its wait: the waiting call then resumes and fails (or reports `cancelled`). Only a pending request can be
 * cancelled.
 */
export async function cancelHuman(deps: KernelDeps, id: string, reason: string, actor = 'host'): Promise<HumanRequest> {
  return inTransaction(deps.db, deps.scopes, actor, null, async (scope) => {
    const req = await getHumanRequest(scope.store, id);
    if (!req) throw new LibosError('human_request_not_found', `human request ${id} does not exist`, { details: { id } });
    const settled = await settleHumanRequest(
      scope.store,
      id,
      'cancelled',
      { reason, cancelled_by: actor },
      scope.clock.now().toISOString(),
    );
    await scope.events.emit('human_request_cancelled', { pid: req.pid, request_id: id });
    await scope.audit.record({
      action: 'human.cancel',
      target: resources.humanRequest(id),
      decision: 'cancelled',
      details: { pid: req.pid, kind: req.kind },
    });
    await wakeIfHumanWaitSettled(scope, req.pid, `human request ${id} cancelled`);
    return settled;
  });
}
