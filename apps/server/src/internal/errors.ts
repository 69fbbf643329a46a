import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isLibosError, LibosError } from '@libos/sdk';

/** Any thrown value as a LibosError: a LibosError as it is, anything else as `internal_error` with its cause kept. */
export function asLibosError(err: unknown): LibosError {
  return isLibosError(err) ? err : LibosError.from(err);
}

/**
 * The one error response of the server: `{ error: <LibosError JSON> }` with the status its category maps to
 * (`status` overrides it, e.g. 401 for a missing bearer token, which has no code of its own).
 */
export function errorResponse(c: Context, err: unknown, status?: number): Response {
  const e = asLibosError(err);
  return c.json({ error: e.toJSON() }, (status ?? e.httpStatus) as ContentfulStatusCode);
}

/** The default error reporter: one line on stderr (the stack of a non-LibosError cause after it). */
export function reportToStderr(err: unknown): void {
  const e = asLibosError(err);
  process.stderr.write(`libos server: ${e.code}: ${e.message}${e.cause instanceof Error && e.cause.stack ? `\n${e.cause.stack}` : ''}\n`);
}
