import { Hono } from 'hono';
import { wire } from '@libos/kernel';
import { LibosError } from '@libos/sdk';
import { z } from 'zod';
import type { BackgroundScheduler } from '../internal/background-scheduler.js';
import { jsonBody } from '../internal/parse.js';
import type { ServerContext } from '../internal/server-context.js';

const RunBody = z.strictObject({ max_quanta: z.number().int().min(1).max(10_000) });
const PauseBody = z.strictObject({ reason: z.string().min(1).max(2000).optional() });

/** The background scheduler, or 409 naming how to get one. */
function background(ctx: ServerContext): BackgroundScheduler {
  if (ctx.scheduler) return ctx.scheduler;
  const message =
    'scheduler: this server runs no background scheduler (start it with libos serve --provider, or serve({ provider, background: true }))';
  throw new LibosError('conflict', message, { details: { missing: 'background_scheduler' } });
}

/**
 * The scheduler over HTTP:
 * - `POST /api/scheduler/run {max_quanta}`: runs it with the server's provider until idle or until `max_quanta`
 *   quanta are spent; answers `{quanta, idle, results}`. 409 when the server has no provider, while another run is in
 *   progress, or when the server runs its scheduler in the background (pause and resume that one instead).
 * - `GET /api/scheduler`: `{mode: 'background', state, provider, model, profile, busy, quanta, error}`, or
 *   `{mode: 'on_request', provider}` on a server without a background scheduler.
 * - `POST /api/scheduler/pause {reason?}` / `POST /api/scheduler/resume`: the background scheduler stops starting
 *   quanta (the running one finishes) / starts again; each answers the status (409 without a background scheduler).
 */
export function schedulerRoutes(ctx: ServerContext) {
  let running = false;
  return new Hono()
    .post('/scheduler/run', jsonBody(RunBody), async (c) => {
      const body = c.req.valid('json');
      const provider = ctx.provider;
      if (!provider)
        throw new LibosError(
          'conflict',
          'provider: this server has no model provider (start it with serve({ provider })); nothing was run',
          { details: { missing: 'provider' } },
        );
      if (ctx.scheduler) {
        const message =
          'scheduler: this server runs its scheduler in the background (POST /api/scheduler/pause and /resume control it); nothing was run';
        throw new LibosError('conflict', message, { details: { background: true } });
      }
      if (running)
        throw new LibosError('conflict', 'scheduler: a run is already in progress on this server', { details: { running: true } });
      running = true;
      try {
        return c.json(wire.runReportToWire(await ctx.rt.run({ provider, maxQuanta: body.max_quanta })));
      } finally {
        running = false;
      }
    })
    .get('/scheduler', (c) =>
      ctx.scheduler ? c.json(ctx.scheduler.status()) : c.json({ mode: 'on_request' as const, provider: ctx.provider?.name ?? null }),
    )
    .post('/scheduler/pause', jsonBody(PauseBody), async (c) => c.json(await background(ctx).pause(c.req.valid('json').reason)))
    .post('/scheduler/resume', async (c) => c.json(await background(ctx).resume()));
}
