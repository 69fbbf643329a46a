import { LibosError } from '@libos/sdk';
import type { JsonValue } from './json-value.js';

/**
 * Parses an RFC 6901 JSON pointer into reference tokens. `""` is the whole value; anything else starts with `/`;
 * `~0` is `~`, `~1` is `/`, any other `~` (also a trailing one) is a syntax error.
 *
 * @example
 * parsePointer('/nested/a~1b/~0key/1'); // ['nested', 'a/b', '~key', '1']
 */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new LibosError('pointer_syntax', `json_pointer: must be "" or start with "/" (got ${JSON.stringify(pointer)})`, {
      details: { field: 'json_pointer' },
    });
  }
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => {
      if (/~(?![01])/.test(raw)) {
        throw new LibosError('pointer_syntax', `json_pointer: "~" must be followed by 0 or 1 in token ${JSON.stringify(raw)}`, {
          details: { field: 'json_pointer' },
        });
      }
      return raw.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/**
 * Walks `tokens` into `value`. Objects need an own key; arrays need a canonical decimal index below their
 * length (`-` is refused); scalars cannot be descended into.
 *
 * @example
 * resolvePointer({ l: [0, { name: '雪' }] }, ['l', '1']); // { name: '雪' }
 */
export function resolvePointer(value: JsonValue, tokens: readonly string[]): JsonValue {
  let cur = value;
  let at = '';
  for (const token of tokens) {
    const here = `${at}/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const unresolved = (why: string) =>
      new LibosError('pointer_unresolved', `json_pointer: ${JSON.stringify(here)} does not resolve: ${why}`, {
        details: { field: 'json_pointer', at: here },
      });
    if (Array.isArray(cur)) {
      if (!ARRAY_INDEX.test(token)) throw unresolved(`array index must be digits without a leading zero (got ${JSON.stringify(token)})`);
      const index = Number(token);
      if (index >= cur.length) throw unresolved(`index ${index} is not below the array length ${cur.length}`);
      cur = (cur as readonly JsonValue[])[index]!;
    } else if (cur !== null && typeof cur === 'object') {
      if (!Object.hasOwn(cur, token)) throw unresolved(`no key ${JSON.stringify(token)}`);
      cur = (cur as { readonly [key: string]: JsonValue })[token]!;
    } else {
      throw unresolved(`cannot descend into a ${cur === null ? 'null' : typeof cur}`);
    }
    at = here;
  }
  return cur;
}
