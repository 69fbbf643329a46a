import { Hono } from 'hono';
import type { ServerContext } from '../internal/server-context.js';

/** `GET /api/health`: the server is up; names the store it serves and whether a model is configured. */
export function healthRoutes(ctx: ServerContext) {
  return new Hono().get('/health', (c) => c.json({ ok: true, db: ctx.rt.location, provider: ctx.provider ? ctx.provider.name : null }));
}
