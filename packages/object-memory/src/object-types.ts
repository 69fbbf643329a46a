import { LibosError } from '@libos/sdk';

/** The closed set of Object types. A type classifies; it imposes no payload schema. */
export const OBJECT_TYPES = [
  'task',
  'goal',
  'plan',
  'step',
  'constraint',
  'message',
  'human_decision',
  'human_request',
  'tool_result',
  'observation',
  'error_trace',
  'code_patch',
  'test_result',
  'evidence',
  'claim',
  'summary',
  'skill',
  'tool_spec',
  'tool_candidate',
  'tool_artifact',
  'checkpoint',
  'process_state',
  'external_ref',
  'artifact',
] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

const TYPE_SET: ReadonlySet<string> = new Set(OBJECT_TYPES);

/**
 * Checks an Object type against the closed enum; throws `invalid_object_type`.
 *
 * @example
 * requireObjectType('plan'); // 'plan'
 */
export function requireObjectType(type: string): ObjectType {
  if (TYPE_SET.has(type)) return type as ObjectType;
  throw new LibosError('invalid_object_type', `type: must be one of ${OBJECT_TYPES.join(', ')} (got ${JSON.stringify(type)})`, {
    details: { field: 'type' },
  });
}
