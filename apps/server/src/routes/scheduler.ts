import { Hono } from 'hono';
import { LibosError } from '@libos/sdk';
import { z } from 'zod';
import { jsonBody } from '../internal/parse.js';
import type { ServerContext } from '../internal/server-context.js';

const RunBody = z.strictObject({ max_quanta: z.number().int().min(1).max(10_000) });

/**
 * `POST /api/scheduler/run {max_quanta}`: runs the scheduler with the server's provider until idle or until
 * `max_quanta` quanta are spent; answers `{quanta, idle, results}`. 409 when the server has no provider, or while
 * another run is in progress.
 */
export function schedulerRoutes(ctx: ServerContext) {
  let running = false;
  return new Hono().post('/scheduler/run', jsonBody(RunBody), async (c) => {
    const body = c.req.valid('json');
    const provider = ctx.provider;
    if (!provider) throw new LibosError('conflict', 'provider: this server has no model provider (start it with serve({ provider })); nothing was run', { details: { missing: 'provider' } });
    if (running) throw new LibosError('conflict', 'scheduler: a run is already in progress on this server', { details: { running: true } });
    running = true;
    try {
      return c.json(await ctx.rt.run({ provider, maxQuanta: body.max_quanta }));
    } finally {
      running = false;
    }
  });
}
