import { LibosError, type ErrorCode } from '@libos/sdk';

/**
 * Why an input or a filesystem state was refused (`details.reason`). The error code comes from the sdk's closed table;
 * the reason tells apart refusals that share a code (e.g. `invalid_arguments` for a binary file and for a NUL byte).
 */
export type RefusalReason =
  | 'empty_path'
  | 'nul_byte'
  | 'not_utf8'
  | 'control_character'
  | 'wildcard_in_path'
  | 'path_too_long'
  | 'not_found'
  | 'is_directory'
  | 'not_a_directory'
  | 'not_a_regular_file'
  | 'binary_file'
  | 'file_too_large'
  | 'offset_not_char_boundary'
  | 'offset_out_of_range'
  | 'line_out_of_range'
  | 'conflicting_arguments'
  | 'old_text_not_found'
  | 'old_text_ambiguous'
  | 'already_exists'
  | 'directory_not_empty'
  | 'symlink_loop'
  | 'git_metadata'
  | 'os_denied'
  | 'not_a_git_repository'
  | 'outside_repository'
  | 'option_like_argument'
  | 'environment_variable'
  | 'program_not_found'
  | 'unrecognised_format'
  | 'bad_log'
  | 'bad_pattern'
  | 'holds_working_directory'
  | 'capability_denied';

/** A refusal: a LibosError whose details name the field, the reason and the path when there is one. */
export function refuse(
  code: ErrorCode,
  reason: RefusalReason,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
  cause?: unknown,
): LibosError {
  return new LibosError(
    code,
    message,
    cause === undefined ? { details: { reason, ...details } } : { details: { reason, ...details }, cause },
  );
}

/**
 * Maps an operating-system error of a filesystem call on `path` to a LibosError with a clear code and reason. Codes
 * it does not know become `internal_error` with the cause kept (never swallowed).
 *
 * @example
 * import { readFileSync } from 'node:fs';
 * const p = '/srv/app/notes.md';
 * try { readFileSync(p); } catch (err) { throw fsError(err, p, 'path'); }
 */
export function fsError(err: unknown, path: string, field: string): LibosError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const d = { field, path };
  switch (code) {
    case 'ENOENT':
      return refuse('not_found', 'not_found', `${field}: ${path} does not exist`, d);
    case 'EISDIR':
      return refuse('invalid_arguments', 'is_directory', `${field}: ${path} is a directory, not a file`, d);
    case 'ENOTDIR':
      return refuse('invalid_arguments', 'not_a_directory', `${field}: a component of ${path} is not a directory`, d);
    case 'EEXIST':
      return refuse('conflict', 'already_exists', `${field}: ${path} already exists`, d);
    case 'ENOTEMPTY':
      return refuse(
        'conflict',
        'directory_not_empty',
        `${field}: directory ${path} is not empty (pass recursive: true to delete it with its contents)`,
        d,
      );
    case 'ELOOP':
      return refuse('invalid_arguments', 'symlink_loop', `${field}: ${path} has too many levels of symbolic links`, d);
    case 'ENAMETOOLONG':
      return refuse('invalid_arguments', 'path_too_long', `${field}: ${path} is longer than the operating system allows`, d);
    case 'EACCES':
    case 'EPERM':
      return refuse(
        'permission_denied',
        'os_denied',
        `${field}: the operating system refused access to ${path} (${code}); a libOS grant cannot lift that`,
        d,
      );
    case 'ENOSPC':
    case 'EDQUOT':
      return new LibosError('disk_full', `${field}: no space left writing ${path}`, { details: d, cause: err });
    default: {
      const e = LibosError.from(err);
      return new LibosError('internal_error', `${field}: ${path}: ${e.message}`, { details: d, cause: err });
    }
  }
}
