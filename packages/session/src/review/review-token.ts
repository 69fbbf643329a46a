import { canonicalJson, sha256Hex, type HumanMessage } from '@libos/sdk';

/** Every review token starts with this. */
export const REVIEW_TOKEN_PREFIX = 'exitrev_';

/** What a review token identifies: the goal's identity and version, and every human message with its status. */
export interface ReviewIdentity {
  readonly goalOid: string;
  readonly goalVersion: number;
  /** All human messages of the process, unread and acked, oldest first. */
  readonly humanMessages: readonly Pick<HumanMessage, 'message_id' | 'status'>[];
  /** `acknowledgedMessagesSha256` of the acked ones. */
  readonly acknowledgedSha256: string;
}

/**
 * sha256 of the immutable content of acknowledged human messages, in order (never their status or timestamps).
 *
 * @example
 * acknowledgedMessagesSha256([]); // sha256 of "[]"
 */
export function acknowledgedMessagesSha256(acked: readonly HumanMessage[]): string {
  return sha256Hex(
    canonicalJson(
      acked.map((m) => ({
        id: m.message_id,
        sender: m.sender,
        recipient: m.recipient_pid,
        kind: m.kind,
        channel: m.channel,
        correlation_id: m.correlation_id,
        reply_to: m.reply_to,
        subject: m.subject,
        body: m.body,
        payload: m.payload ?? null,
      })),
    ),
  );
}

/**
 * The review token: `exitrev_` + sha256 of the canonical identity. It changes with the goal version, a new human
 * message or an ACK, and with nothing else (successful tools and human output leave it as it is). Task runs are not
 * projected here, so `task_run` is always null.
 *
 * @example
 * reviewToken({ goalOid: 'obj_0000000000000001', goalVersion: 1, humanMessages: [], acknowledgedSha256: acknowledgedMessagesSha256([]) });
 * // 'exitrev_…' (64 hex digits)
 */
export function reviewToken(id: ReviewIdentity): string {
  return (
    REVIEW_TOKEN_PREFIX +
    sha256Hex(
      canonicalJson({
        goal_oid: id.goalOid,
        goal_version: id.goalVersion,
        task_run: null,
        human_messages: id.humanMessages.map((m) => ({ message_id: m.message_id, status: m.status })),
        acknowledged_human_messages_sha256: id.acknowledgedSha256,
      }),
    )
  );
}
