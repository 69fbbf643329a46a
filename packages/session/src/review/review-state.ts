import {
  canonicalJson,
  LibosError,
  SERVICE_NAMES,
  sha256Hex,
  type HumanMessage,
  type ObjectsService,
  type ProcessService,
  type ServiceScope,
} from '@libos/sdk';
import { goalReference, type GoalReference } from './review-references.js';
import { acknowledgedMessagesSha256, reviewToken } from './review-token.js';
import { explicitToolHints } from './tool-hints.js';

/** A review covers at most this many human messages; more fails closed (no token). */
export const MESSAGE_READ_HARD_LIMIT = 1_000;

/** Everything a completion review is built from, read in the exit call's transaction. */
export interface ReviewState {
  readonly pid: string;
  readonly goal: {
    readonly oid: string;
    readonly version: number;
    readonly payloadSha256: string;
    readonly source: 'object_memory';
    readonly reference: GoalReference;
  };
  readonly reviewToken: string;
  /** Acked human message ids, oldest first. */
  readonly ackedIds: readonly string[];
  readonly ackedSha256: string;
  readonly unreadIds: readonly string[];
  /** The goal OID, then every acked message id. */
  readonly expectedSourceRefs: readonly string[];
  readonly observedTools: readonly string[];
  readonly hints: readonly string[];
}

function objectsOf(scope: ServiceScope): ObjectsService {
  try {
    return scope.service<ObjectsService>(SERVICE_NAMES.objects);
  } catch (err) {
    if (err instanceof LibosError && err.code === 'not_found') {
      throw new LibosError(
        'completion_review_invalid',
        'goal: a completion review reads the goal Object, and this runtime does not load the Object Memory plugin; ' +
          'no review token is issued',
        { cause: err },
      );
    }
    throw err;
  }
}

/** The goal text the hints are read from: a string goal as is, any other JSON goal canonically. */
const goalText = (payload: unknown) => (typeof payload === 'string' ? payload : canonicalJson(payload ?? null));

/**
 * Reads the review state of `pid`: the live goal (identity, version, hash), every human message, the tools that
 * succeeded so far, and the token they make. Fails closed (`completion_review_invalid`, no token) when the goal is
 * missing or its payload is gone after a reopen, or when there are more than 1,000 human messages.
 *
 * @example
 * const state = await loadReviewState(ctx, ctx.pid);
 * state.reviewToken; // 'exitrev_…'
 */
export async function loadReviewState(scope: ServiceScope, pid: string): Promise<ReviewState> {
  const processes = scope.service<ProcessService>(SERVICE_NAMES.processes);
  const me = await processes.get(pid);
  if (me.goalOid === null) {
    throw new LibosError(
      'completion_review_invalid',
      `goal: process ${pid} has no goal Object, so its completion cannot be reviewed; no review token is issued`,
      { details: { field: 'goal', pid } },
    );
  }
  const objects = objectsOf(scope);
  const goal = await objects.describe(me.goalOid);
  if (goal === null) {
    throw new LibosError(
      'completion_review_invalid',
      `goal: goal Object ${me.goalOid} of ${pid} no longer exists, so its completion cannot be reviewed; no review token is issued`,
      { details: { field: 'goal', goal_oid: me.goalOid } },
    );
  }
  if (!goal.payloadAvailable) {
    throw new LibosError(
      'completion_review_invalid',
      `goal: the payload of goal Object ${goal.oid} is unavailable after a runtime reopen, and this runtime ` +
        `does not recover goals from LLM records; no review token is issued. Restore a checkpoint that holds ` +
        `the goal, or have the host establish a bounded successor goal; a human follow-up message never replaces ` +
        `the original goal`,
      { details: { field: 'goal', goal_oid: goal.oid, remedies: ['restore_checkpoint', 'bounded_successor_goal'] } },
    );
  }
  const payload = await objects.readPayload(goal.oid);

  const messages: readonly HumanMessage[] = await processes.humanMessages(pid, { limit: MESSAGE_READ_HARD_LIMIT + 1 });
  if (messages.length > MESSAGE_READ_HARD_LIMIT) {
    throw new LibosError(
      'completion_review_invalid',
      `human_messages: ${pid} has more than ${MESSAGE_READ_HARD_LIMIT} human messages, more than one review ` +
        `can cover; no review token is issued. Ask the host for a consolidated successor process`,
      { details: { field: 'human_messages', limit: MESSAGE_READ_HARD_LIMIT } },
    );
  }
  const acked = messages.filter((m) => m.status === 'acked');
  const ackedSha256 = acknowledgedMessagesSha256(acked);
  const observedTools = await processes.observedSuccessfulTools(pid);
  const ackedIds = acked.map((m) => m.message_id);
  return {
    pid,
    goal: {
      oid: goal.oid,
      version: goal.version,
      payloadSha256: sha256Hex(canonicalJson(payload ?? null)),
      source: 'object_memory',
      reference: goalReference(goal.namespace, goal.name),
    },
    reviewToken: reviewToken({ goalOid: goal.oid, goalVersion: goal.version, humanMessages: messages, acknowledgedSha256: ackedSha256 }),
    ackedIds,
    ackedSha256,
    unreadIds: messages.filter((m) => m.status === 'unread').map((m) => m.message_id),
    expectedSourceRefs: [goal.oid, ...ackedIds],
    observedTools,
    hints: explicitToolHints(goalText(payload), me.toolTable, observedTools),
  };
}
