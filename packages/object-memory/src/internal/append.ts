import { LibosError } from '@libos/sdk';
import { isJsonObject, jsonKind, type JsonValue } from './json-value.js';

/** The outcome of one append: the new payload (a copy; the input is untouched) and what to report. */
export interface AppendOutcome {
  readonly payload: JsonValue;
  /** The list field appended to, or null when the root itself is the list. */
  readonly listField: string | null;
  /** Length of the list after the append. */
  readonly length: number;
}

/**
 * Appends `entry` (spec §4). Object root: the list at `listField` (created as `[]` when missing, so a typo
 * creates a field); a present non-array value is `append_field_not_list`. Array root: pushed, `listField`
 * ignored. A scalar, string or null root is `append_target_not_container`. No dedupe.
 *
 * @example
 * appendEntry({ entries: [] }, 'entries', { x: 1 }); // { payload: { entries: [{ x: 1 }] }, listField: 'entries', length: 1 }
 * appendEntry([1], 'x', 2);                           // { payload: [1, 2], listField: null, length: 2 }
 */
export function appendEntry(payload: JsonValue, listField: string, entry: JsonValue): AppendOutcome {
  if (Array.isArray(payload)) {
    const next = [...(payload as readonly JsonValue[]), entry];
    return { payload: next, listField: null, length: next.length };
  }
  if (isJsonObject(payload)) {
    const current = Object.prototype.hasOwnProperty.call(payload, listField) ? payload[listField]! : undefined;
    if (current !== undefined && !Array.isArray(current)) {
      throw new LibosError(
        'append_field_not_list',
        `list_field: ${JSON.stringify(listField)} holds a ${jsonKind(current)}, not a list; nothing was appended`,
        { details: { field: 'list_field', list_field: listField } },
      );
    }
    const list = [...((current as readonly JsonValue[] | undefined) ?? []), entry];
    // Spread plus a computed key keeps "__proto__" an own data property.
    const next = { ...payload, [listField]: list };
    return { payload: next, listField, length: list.length };
  }
  throw new LibosError('append_target_not_container', `payload: a ${jsonKind(payload)} cannot be appended to; only an object or array payload can`, {
    details: { field: 'payload', payload_type: jsonKind(payload) },
  });
}
