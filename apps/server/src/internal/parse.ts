import type { Context, Env, MiddlewareHandler } from 'hono';
import { assertJsonBounds, LibosError } from '@libos/sdk';
import type { z } from 'zod';

/**
 * Parses `raw` with `schema`; a mismatch is `invalid_arguments` naming the first bad field (`where` when the
 * problem is the whole value), with every issue in `details.issues`.
 */
export function parseWith<S extends z.ZodType>(schema: S, raw: unknown, where: string): z.output<S> {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const field = keys.length > 0 ? [...issue.path, keys[0]].join('.') : issue.path.length > 0 ? issue.path.join('.') : where;
  const message =
    keys.length > 0 ? `unknown field${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(k)).join(', ')}` : issue.message;
  throw new LibosError('invalid_arguments', `${field}: ${message}`, {
    details: { field, issues: r.error.issues.map((i) => ({ path: i.path.join('.'), code: i.code, message: i.message })) },
  });
}

/**
 * Reads a request's JSON body and validates it. An empty body is `{}` (so a route whose fields are all optional
 * takes none); malformed JSON or a schema mismatch is `invalid_arguments` (400) naming the field, thrown before
 * the route touches anything.
 */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '') {
    try {
      raw = JSON.parse(text) as unknown;
    } catch (err) {
      throw new LibosError('invalid_arguments', `body: malformed JSON (${(err as Error).message})`, {
        details: { field: 'body' },
        cause: err,
      });
    }
  }
  // The shared JSON bounds, per field, before any (recursive) validation: too deep or too large is a 400, never a 500.
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) assertJsonBounds(raw, 'body');
  else for (const [field, value] of Object.entries(raw)) assertJsonBounds(value, field);
  return parseWith(schema, raw, 'body');
}

/** Validates a request's query string (every value a string; use coercing schemas for numbers). */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parseWith(schema, c.req.query(), 'query');
}

/**
 * Route middleware: the JSON body read and validated as `readBody` does (an empty body is `{}`, any content type),
 * then `c.req.valid('json')` in the handler. Its type is what the typed client (`@libos/client`) sends.
 *
 * @example
 * new Hono().post('/processes', jsonBody(SpawnBody), (c) => c.json(c.req.valid('json')));
 */
export function jsonBody<S extends z.ZodType>(
  schema: S,
): MiddlewareHandler<Env, string, { in: { json: z.input<S> }; out: { json: z.output<S> } }> {
  return async (c, next) => {
    c.req.addValidatedData('json', (await readBody(c, schema)) as object);
    await next();
  };
}

/** Route middleware: the query string validated as `readQuery` does, then `c.req.valid('query')` in the handler. */
export function queryOf<S extends z.ZodType>(
  schema: S,
): MiddlewareHandler<Env, string, { in: { query: z.input<S> }; out: { query: z.output<S> } }> {
  return async (c, next) => {
    c.req.addValidatedData('query', readQuery(c, schema) as object);
    await next();
  };
}
