/**
 * The one error class of libOS, with a closed code table.
 *
 * Every code belongs to exactly one category; the category maps to an HTTP status and to MCP `isError`.
 *
 * @example
 * throw new LibosError('invalid_arguments', 'limit: must be between 1 and 50 (got 0)', { details: { field: 'limit' } });
 */

/** The categories `@libos/sdk` owns. */
export const ERROR_CATEGORIES = [
  'invalid_argument',
  'permission_denied',
  'not_found',
  'conflict',
  'resource_exhausted',
  'unavailable',
  'cancelled',
  'timeout',
  'internal',
] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];

/** HTTP status for each category (the server maps errors with this). */
export const CATEGORY_HTTP_STATUS: Readonly<Record<ErrorCategory, number>> = {
  invalid_argument: 400,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  resource_exhausted: 429,
  unavailable: 503,
  cancelled: 499,
  timeout: 504,
  internal: 500,
};

/**
 * The closed code table: `code -> category`. Codes are lower_snake; grouped by the package that raises them.
 * Adding a code is a change to the plugin contract.
 */
export const ERROR_CODES = {
  // generic / broker
  invalid_arguments: 'invalid_argument',
  tool_not_in_process_table: 'permission_denied',
  process_not_tool_callable: 'conflict',
  permission_denied: 'permission_denied',
  resource_limit_exceeded: 'resource_exhausted',
  internal_error: 'internal',
  not_found: 'not_found',
  conflict: 'conflict',
  cancelled: 'cancelled',
  timeout: 'timeout',
  // store / runtime
  store_locked: 'unavailable',
  store_closed: 'unavailable',
  store_poisoned: 'internal',
  schema_version_mismatch: 'unavailable',
  store_corrupt: 'conflict',
  not_a_libos_store: 'invalid_argument',
  store_read_only: 'unavailable',
  disk_full: 'resource_exhausted',
  // plugins, skills, images
  plugin_invalid: 'invalid_argument',
  skill_invalid: 'invalid_argument',
  skill_not_found: 'not_found',
  skill_package_changed: 'conflict',
  image_not_found: 'not_found',
  image_invalid: 'invalid_argument',
  tool_not_found: 'not_found',
  // processes
  process_not_found: 'not_found',
  invalid_state: 'conflict',
  not_direct_child: 'permission_denied',
  interrupted_by_message: 'cancelled',
  call_already_waiting: 'conflict',
  // capabilities
  resource_invalid: 'invalid_argument',
  rights_invalid: 'invalid_argument',
  capability_invalid: 'invalid_argument',
  capability_not_found: 'not_found',
  delegation_denied: 'permission_denied',
  label_elevation_denied: 'permission_denied',
  declassification_denied: 'permission_denied',
  approval_required: 'permission_denied',
  human_request_not_found: 'not_found',
  human_request_not_pending: 'conflict',
  egress_denied: 'permission_denied',
  // object memory
  invalid_namespace: 'invalid_argument',
  invalid_name: 'invalid_argument',
  invalid_object_type: 'invalid_argument',
  invalid_metadata: 'invalid_argument',
  payload_not_json: 'invalid_argument',
  payload_too_large: 'invalid_argument',
  entry_too_large: 'invalid_argument',
  limit_out_of_range: 'invalid_argument',
  scan_ceiling_reached: 'invalid_argument',
  pointer_syntax: 'invalid_argument',
  pointer_unresolved: 'invalid_argument',
  cursor_out_of_range: 'invalid_argument',
  cursor_not_boundary: 'invalid_argument',
  digest_mismatch: 'invalid_argument',
  append_field_not_list: 'invalid_argument',
  append_target_not_container: 'invalid_argument',
  namespace_exists: 'invalid_argument',
  object_name_exists: 'invalid_argument',
  parent_invalid: 'invalid_argument',
  parent_not_found: 'invalid_argument',
  namespace_denied: 'permission_denied',
  object_denied: 'permission_denied',
  object_immutable: 'permission_denied',
  parent_unavailable: 'permission_denied',
  namespace_not_found: 'not_found',
  object_not_found: 'not_found',
  version_conflict: 'conflict',
  read_budget_exhausted: 'internal',
  runtime_unavailable: 'internal',
  payload_unavailable_after_reopen: 'unavailable',
  // object tasks
  task_not_found: 'not_found',
  task_capacity_exceeded: 'conflict',
  // session
  invalid_timezone: 'invalid_argument',
  completion_review_invalid: 'invalid_argument',
  // llm providers
  provider_error: 'unavailable',
  provider_timeout: 'timeout',
} as const satisfies Record<string, ErrorCategory>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** True when `code` is in the closed table. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, code);
}

/** The JSON shape of an error in a tool result envelope, HTTP body or MCP result. */
export interface ErrorPayload {
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface LibosErrorOptions {
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

export class LibosError extends Error {
  override readonly name = 'LibosError';
  readonly code: ErrorCode;
  readonly category: ErrorCategory;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, options: LibosErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    if (!isErrorCode(code)) throw new TypeError(`LibosError: unknown code ${JSON.stringify(code)}`);
    this.code = code;
    this.category = ERROR_CODES[code];
    this.details = options.details;
  }

  get httpStatus(): number {
    return CATEGORY_HTTP_STATUS[this.category];
  }

  toJSON(): ErrorPayload {
    return this.details === undefined
      ? { code: this.code, category: this.category, message: this.message }
      : { code: this.code, category: this.category, message: this.message, details: this.details };
  }

  /** Wraps anything thrown into a LibosError; a non-LibosError becomes `internal_error` with its cause kept. */
  static from(err: unknown): LibosError {
    if (err instanceof LibosError) return err;
    const msg = err instanceof Error ? err.message : String(err);
    return new LibosError('internal_error', `internal error: ${msg}`, { cause: err });
  }
}

/** True for a LibosError (also across duplicated module instances). */
export function isLibosError(err: unknown): err is LibosError {
  return err instanceof LibosError || (err instanceof Error && err.name === 'LibosError' && isErrorCode((err as LibosError).code));
}
