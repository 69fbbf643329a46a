import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { LibosError } from '@libos/sdk';
import { errorResponse } from './internal/errors.js';

/** A fresh bearer token: 32 random bytes as 64 hex characters. */
export function newToken(): string {
  return randomBytes(32).toString('hex');
}

/** Checks a caller-chosen token: 16 to 512 visible ASCII characters (it travels in a header). */
export function assertUsableToken(token: string): void {
  if (!/^[\x21-\x7e]{16,512}$/.test(token))
    throw new LibosError('invalid_arguments', 'token: must be 16 to 512 visible ASCII characters (no spaces)', {
      details: { field: 'token' },
    });
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Requires `Authorization: Bearer <token>` on every request it guards; anything else is 401 with a JSON error
 * and a `WWW-Authenticate` challenge. Tokens are compared in constant time (as digests, so length leaks nothing).
 *
 * @example
 * app.use('*', bearerAuth(token));
 */
export function bearerAuth(token: string): MiddlewareHandler {
  const expected = digest(token);
  return async (c, next) => {
    const m = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(c.req.header('authorization') ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) {
      c.header('WWW-Authenticate', 'Bearer realm="libos"');
      const reason = m ? 'wrong bearer token' : 'missing bearer token';
      return errorResponse(
        c,
        new LibosError('permission_denied', `${reason}: send Authorization: Bearer <token> (libos serve prints it)`, {
          details: { reason: 'unauthorized' },
        }),
        401,
      );
    }
    await next();
  };
}
