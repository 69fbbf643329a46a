/** The largest page `read_memory_object` serves: a goal (at most 32,000 characters) fits in one read. */
export const GOAL_READ_MAX_PAYLOAD_CHARS = 200_000;

/** How to read the live goal: by namespace and name with `read_memory_object` (never by OID). */
export interface GoalReference {
  readonly kind: 'object_memory';
  readonly namespace: string;
  readonly name: string;
  readonly tool: 'read_memory_object';
  readonly arguments: { readonly namespace: string; readonly name: string; readonly max_payload_chars: number };
}

/**
 * The goal's reference in a review.
 *
 * @example
 * goalReference('process:pid_1', 'goal').arguments; // { namespace: 'process:pid_1', name: 'goal', max_payload_chars: 200000 }
 */
export function goalReference(namespace: string, name: string): GoalReference {
  return {
    kind: 'object_memory',
    namespace,
    name,
    tool: 'read_memory_object',
    arguments: { namespace, name, max_payload_chars: GOAL_READ_MAX_PAYLOAD_CHARS },
  };
}

/**
 * How to re-read the acknowledged human messages without changing them: `read_process_messages` with the fixed
 * arguments, plus `message_ids` and `limit` copied from the review fields named in `copy_arguments`. There is no
 * cursor: on `has_more`, read the ids not yet returned by exact ids.
 */
export const ACKNOWLEDGED_MESSAGES_REFERENCE = Object.freeze({
  kind: 'process_message_ids',
  activate_skill: 'agent-libos-child-processes',
  tool: 'read_process_messages',
  fixed_arguments: Object.freeze({ include_acked: true, ack: false }),
  copy_arguments: Object.freeze({ message_ids: 'acknowledged_human_message_ids', limit: 'acknowledged_human_message_count' }),
} as const);
