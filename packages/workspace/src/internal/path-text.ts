import { refuse } from './errors.js';

/** Longest path text accepted (an `fs:` resource holds at most 2048 characters). */
export const MAX_PATH_CHARS = 2_000;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0001-\u001f\u007f]/;

/**
 * Refuses path text that cannot name a file through an `fs:` grant: empty, a NUL byte, an unpaired surrogate (not
 * valid UTF-8), a control character, a `*` (a resource wildcard), or longer than `MAX_PATH_CHARS`. Each is
 * `invalid_arguments` naming the field and the reason; nothing is touched.
 *
 * @example
 * checkPathText('path', 'src/a.ts'); // ok
 * checkPathText('path', 'a\u0000b'); // throws invalid_arguments (reason nul_byte)
 */
export function checkPathText(field: string, value: string): void {
  const d = { field };
  if (value === '') throw refuse('invalid_arguments', 'empty_path', `${field}: must not be empty`, d);
  if (value.includes('\u0000'))
    throw refuse('invalid_arguments', 'nul_byte', `${field}: contains a NUL byte, which no file name can hold`, d);
  if (LONE_SURROGATE.test(value)) {
    throw refuse(
      'invalid_arguments',
      'not_utf8',
      `${field}: is not valid UTF-8 (it holds an unpaired UTF-16 surrogate); name files in UTF-8`,
      d,
    );
  }
  if (CONTROL.test(value))
    throw refuse('invalid_arguments', 'control_character', `${field}: contains a control character; such names cannot be granted`, d);
  if (value.includes('*'))
    throw refuse('invalid_arguments', 'wildcard_in_path', `${field}: contains "*", which an fs: resource reads as a wildcard`, d);
  if (value.length > MAX_PATH_CHARS)
    throw refuse('invalid_arguments', 'path_too_long', `${field}: must be at most ${MAX_PATH_CHARS} characters (got ${value.length})`, d);
}

/** True when `bytes` decode as UTF-8 without a replacement. */
export function isUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Refuses text that is not valid Unicode (an unpaired surrogate), which would be written as U+FFFD instead of what
 * the caller sent: `invalid_arguments` naming the field.
 */
export function checkText(field: string, value: string): void {
  if (LONE_SURROGATE.test(value))
    throw refuse('invalid_arguments', 'not_utf8', `${field}: is not valid UTF-8 (it holds an unpaired UTF-16 surrogate)`, { field });
}
