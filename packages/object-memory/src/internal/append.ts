import { LibosError } from '@libos/sdk';
import { isJsonObject, jsonKind, type JsonValue } from './json-value.js';

/** Where an append lands: the root list, or the list at `key` of an object root. */
export type AppendTarget =
  | { readonly key: null; readonly list: readonly JsonValue[] }
  /** `list` is undefined when the field is missing: the append creates it. */
  | { readonly key: string; readonly list: readonly JsonValue[] | undefined };

/**
 * Resolves the list an append goes to. Object root: the list at `listField` (missing: created as `[]`,
 * so a typo creates a field); a present non-array value is `append_field_not_list`. Array root: the root itself,
 * `listField` ignored. A scalar, string or null root is `append_target_not_container`. Changes nothing.
 *
 * @example
 * appendTarget({ entries: [] }, 'entries'); // { key: 'entries', list: [] }
 * appendTarget([1], 'x');                   // { key: null, list: [1] }
 */
export function appendTarget(payload: JsonValue, listField: string): AppendTarget {
  if (Array.isArray(payload)) return { key: null, list: payload as readonly JsonValue[] };
  if (isJsonObject(payload)) {
    const current = Object.hasOwn(payload, listField) ? payload[listField]! : undefined;
    if (current !== undefined && !Array.isArray(current)) {
      throw new LibosError(
        'append_field_not_list',
        `list_field: ${JSON.stringify(listField)} holds a ${jsonKind(current)}, not a list; nothing was appended`,
        { details: { field: 'list_field', list_field: listField } },
      );
    }
    return { key: listField, list: current as readonly JsonValue[] | undefined };
  }
  throw new LibosError(
    'append_target_not_container',
    `payload: a ${jsonKind(payload)} cannot be appended to; only an object or array payload can`,
    {
      details: { field: 'payload', payload_type: jsonKind(payload) },
    },
  );
}
