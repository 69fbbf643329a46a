/**
 * The one error class of libOS: the kernel's closed code table, plus the codes plugins declare.
 *
 * Every code belongs to exactly one of the closed categories; the category maps to an HTTP status and to MCP
 * `isError`. A plugin declares its own codes under those categories (`Plugin.errorCodes`, `defineErrorCodes`).
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
  store_not_found: 'not_found',
  disk_full: 'resource_exhausted',
  // plugins, skills, images
  plugin_invalid: 'invalid_argument',
  plugin_missing: 'unavailable',
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
  // process ends: the `code` of a failed or killed process's outcome (besides cancelled, resource_limit_exceeded and
  // the code of the error that failed it)
  terminated: 'cancelled',
  ancestor_ended: 'cancelled',
  runtime_reopened: 'cancelled',
  superseded_by_restore: 'cancelled',
  pending_action_resume_interrupted: 'internal',
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
  /** The payload is runtime-local on another live host of a shared store (the host that runs the writer's tree). */
  payload_unavailable: 'unavailable',
  // object tasks
  task_not_found: 'not_found',
  task_capacity_exceeded: 'conflict',
  // session
  invalid_timezone: 'invalid_argument',
  completion_review_invalid: 'invalid_argument',
  // llm providers
  provider_error: 'unavailable',
  provider_timeout: 'timeout',
  // hosts (CLI, server)
  address_in_use: 'unavailable',
} as const satisfies Record<string, ErrorCategory>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The codes a failed or killed process's outcome carries when no tool error ended it (`outcome.code`); a process a
 * tool error failed carries that error's code instead.
 */
export const PROCESS_END_CODES = [
  'cancelled',
  'terminated',
  'ancestor_ended',
  'runtime_reopened',
  'superseded_by_restore',
  'pending_action_resume_interrupted',
  'resource_limit_exceeded',
] as const satisfies readonly ErrorCode[];
export type ProcessEndCode = (typeof PROCESS_END_CODES)[number];

/**
 * A code a LibosError may carry: one of the kernel's (`ErrorCode`, autocompleted) or one a plugin declared under a
 * category with `Plugin.errorCodes` / `defineErrorCodes`.
 */
export type AnyErrorCode = ErrorCode | (string & {});

/** What a plugin's own code looks like: lower_snake, at most 64 characters (e.g. `weather_down`). */
export const ERROR_CODE_PATTERN = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

interface DeclaredCode {
  readonly category: ErrorCategory;
  readonly owner: string;
}

// Codes plugins declared, shared through a global symbol so every copy of this module (ESM and CommonJS builds, two
// installed versions) sees one table: a LibosError made by a plugin's copy is recognised by the kernel's.
const DECLARED_KEY = Symbol.for('libos.sdk.error-codes.v1');
function declared(): Map<string, DeclaredCode> {
  const g = globalThis as unknown as Record<symbol, Map<string, DeclaredCode> | undefined>;
  return (g[DECLARED_KEY] ??= new Map<string, DeclaredCode>());
}

/** True when `code` is in the kernel's closed table (`ERROR_CODES`). Plugin codes: `errorCategoryOf`. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/** The category of a kernel code or a declared plugin code; undefined for an unknown one. */
export function errorCategoryOf(code: unknown): ErrorCategory | undefined {
  if (isErrorCode(code)) return ERROR_CODES[code];
  return typeof code === 'string' ? declared().get(code)?.category : undefined;
}

/** One reason a plugin's code declaration is refused (the loader reports it as `plugin_invalid`). */
export function errorCodeProblem(code: string, category: unknown): string | null {
  if (code.length > 64 || !ERROR_CODE_PATTERN.test(code)) return `must be lower_snake, at most 64 characters (${ERROR_CODE_PATTERN})`;
  if (isErrorCode(code)) return `is a kernel code (category ${ERROR_CODES[code]}); use it as it is instead of declaring it`;
  if (!(ERROR_CATEGORIES as readonly unknown[]).includes(category)) {
    return `category ${JSON.stringify(category)} must be one of ${ERROR_CATEGORIES.join(', ')}`;
  }
  const prev = declared().get(code);
  if (prev && prev.category !== category) return `is already declared by ${prev.owner} under ${prev.category}`;
  return null;
}

/**
 * Declares a plugin's own error codes, each under one of the closed categories (which decide the HTTP status and
 * MCP `isError`), so its tools can throw `new LibosError('weather_down', ...)`. `definePlugin` calls it for
 * `Plugin.errorCodes`, and so does the kernel's loader. A code may be declared again with the same category; a kernel
 * code, a bad name or category, or a second category for one code throws a `TypeError` naming it. A code nobody
 * declared cannot be thrown: the constructor refuses it, and the ToolBroker reports that as `internal_error`.
 *
 * @example
 * export const WEATHER_ERRORS = defineErrorCodes('@acme/libos-weather', { weather_down: 'unavailable' });
 * throw new LibosError('weather_down', 'city: the weather service did not answer');
 */
export function defineErrorCodes<const T extends Readonly<Record<string, ErrorCategory>>>(owner: string, codes: T): T {
  for (const [code, category] of Object.entries(codes)) {
    const problem = errorCodeProblem(code, category);
    if (problem) throw new TypeError(`error code ${JSON.stringify(code)} of ${owner}: ${problem}`);
  }
  const table = declared();
  for (const [code, category] of Object.entries(codes)) if (!table.has(code)) table.set(code, { category, owner });
  return codes;
}

/** The JSON shape of an error in a tool result envelope, HTTP body or MCP result. */
export interface ErrorPayload {
  readonly code: AnyErrorCode;
  readonly category: ErrorCategory;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface LibosErrorOptions {
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

// The brand every LibosError carries: recognised across module copies, where `instanceof` would fail.
const BRAND = Symbol.for('libos.sdk.LibosError');

export class LibosError extends Error {
  override readonly name = 'LibosError';
  readonly code: AnyErrorCode;
  readonly category: ErrorCategory;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: AnyErrorCode, message: string, options: LibosErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const category = errorCategoryOf(code);
    if (category === undefined) {
      throw new TypeError(`LibosError: unknown code ${JSON.stringify(code)} (not a kernel code, and no loaded plugin declared it)`);
    }
    this.code = code;
    this.category = category;
    this.details = options.details;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** `x instanceof LibosError` holds for a LibosError of any copy of this module (see `isLibosError`). */
  static [Symbol.hasInstance](value: unknown): boolean {
    return isLibosError(value);
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
    if (isLibosError(err)) return err;
    const msg = err instanceof Error ? err.message : String(err);
    return new LibosError('internal_error', `internal error: ${msg}`, { cause: err });
  }
}

/**
 * True for a LibosError made by any copy of `@libos/sdk` (ESM or CommonJS build, another installed version): it
 * carries the brand and a code whose category is the one its table gives. A plain `Error` named `LibosError`, or an
 * error with an undeclared code, is not one.
 */
export function isLibosError(err: unknown): err is LibosError {
  if (typeof err !== 'object' || err === null || (err as Record<symbol, unknown>)[BRAND] !== true) return false;
  const e = err as { code?: unknown; category?: unknown };
  return errorCategoryOf(e.code) === e.category;
}
