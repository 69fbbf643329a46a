import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { LlmProvider, Runtime } from '@libos/kernel';
import { LibosError } from '@libos/sdk';
import { bearerAuth } from './auth.js';
import { consoleRoutes, defaultConsoleDir } from './console.js';
import { hostGuard, type HostGuardOptions } from './host-guard.js';
import type { BackgroundScheduler } from './internal/background-scheduler.js';
import { asLibosError, errorResponse, reportToStderr } from './internal/errors.js';
import type { ServerContext } from './internal/server-context.js';
import { mcpRoutes } from './mcp.js';
import { grantRoutes } from './routes/grants.js';
import { healthRoutes } from './routes/health.js';
import { hostReadRoutes } from './routes/host-reads.js';
import { humanRequestRoutes } from './routes/human-requests.js';
import { processActionRoutes } from './routes/process-actions.js';
import { processReadRoutes } from './routes/process-reads.js';
import { processRoutes } from './routes/processes.js';
import { schedulerRoutes } from './routes/scheduler.js';
import { DEFAULT_SNAPSHOT_LIMITS, snapshotRoutes, type SnapshotLimits } from './routes/snapshot.js';
import { eventStreamRoutes } from './sse.js';

/** Largest JSON body the REST API reads (the MCP transport has its own bound). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface AppOptions {
  readonly runtime: Runtime;
  /** The bearer token every request must carry. */
  readonly token: string;
  /** The Host/Origin guard (DNS rebinding): the port Host must name, extra hostnames; `serve()` sets both. Default: loopback, any port. */
  readonly hosts?: HostGuardOptions;
  /** The model `POST /api/scheduler/run` uses; without one that route is 409. */
  readonly provider?: LlmProvider;
  /** A scheduler running in the background (`serve({ background: true })` makes and starts one): pause/resume routes. */
  readonly scheduler?: BackgroundScheduler;
  /** Milliseconds between SSE heartbeat comments (default 15,000). */
  readonly heartbeatMs?: number;
  /** At most this many events are replayed to an SSE cursor (default 1,000); an older cursor is invalidated. */
  readonly sseReplayLimit?: number;
  /** Bounds of `GET /api/snapshot` (defaults: 200 processes, 100 pending human requests, 50 events). */
  readonly snapshotLimits?: Partial<SnapshotLimits>;
  /** `POST /api/shutdown` calls this after answering (absent: that route is 404). */
  readonly onShutdown?: () => void;
  /** The built web console served at `/` (default: the one bundled with this package, `dist/console`). */
  readonly consoleDir?: string;
  /** Receives internal errors (also answered 500) and stream errors after a disconnect; default: one line on stderr. */
  readonly onError?: (err: unknown) => void;
}

/**
 * The HTTP face of a runtime as a Hono app: a Host/Origin guard on every route, bearer auth on every route but the web
 * console's page and scripts (`GET /`, `/assets/*`), the REST API under `/api`, the SSE stream at
 * `/api/events/stream`, and MCP at `/mcp/processes/:pid`. Errors answer `{ error }` with
 * the status of their LibosError category. `serve()` runs it on Node; use `createApp` to mount it elsewhere.
 *
 * @example
 * const app = createApp({ runtime: rt, token: 'a-long-random-token' });
 * const res = await app.request('/api/health', { headers: { authorization: 'Bearer a-long-random-token' } });
 */
export function createApp(opts: AppOptions) {
  const ctx: ServerContext = {
    rt: opts.runtime,
    provider: opts.provider,
    scheduler: opts.scheduler,
    heartbeatMs: opts.heartbeatMs ?? 15_000,
    sseReplayLimit: opts.sseReplayLimit ?? 1000,
    onError: opts.onError ?? reportToStderr,
  };
  const api = new Hono()
    .use(
      bodyLimit({
        maxSize: MAX_BODY_BYTES,
        // The rest of the body is not read: `Connection: close` so the client sends its next request on a new socket
        // (a kept-alive one would be closed under it).
        onError: (c) => {
          c.header('Connection', 'close');
          return errorResponse(
            c,
            new LibosError('payload_too_large', `body: larger than ${MAX_BODY_BYTES} bytes`, {
              details: { field: 'body', max_bytes: MAX_BODY_BYTES },
            }),
          );
        },
      }),
    )
    .route('/', healthRoutes(ctx))
    .route('/', snapshotRoutes(ctx, { ...DEFAULT_SNAPSHOT_LIMITS, ...opts.snapshotLimits }))
    .route('/', processRoutes(ctx))
    .route('/', processActionRoutes(ctx))
    .route('/', processReadRoutes(ctx))
    .route('/', grantRoutes(ctx))
    .route('/', hostReadRoutes(ctx))
    .route('/', humanRequestRoutes(ctx))
    .route('/', schedulerRoutes(ctx))
    .route('/', eventStreamRoutes(ctx))
    .post('/shutdown', (c) => {
      const shutdown = opts.onShutdown;
      const { method, path } = c.req;
      if (!shutdown) throw new LibosError('not_found', `no route ${method} ${path}`, { details: { method, path } });
      setImmediate(shutdown);
      return c.json({ ok: true, shutting_down: true }, 202);
    });
  const app = new Hono()
    .use('*', hostGuard(opts.hosts))
    // The console's page and scripts hold no data: they are served before the bearer check (the API is not).
    .route('/', consoleRoutes(opts.consoleDir ?? defaultConsoleDir()))
    .use('*', bearerAuth(opts.token))
    .route('/api', api)
    .route('/mcp', mcpRoutes(ctx));
  app.notFound((c) =>
    errorResponse(
      c,
      new LibosError('not_found', `no route ${c.req.method} ${c.req.path}`, { details: { method: c.req.method, path: c.req.path } }),
    ),
  );
  app.onError((err, c) => {
    const e = asLibosError(err);
    if (e.category === 'internal') ctx.onError(e);
    return errorResponse(c, e);
  });
  return app;
}

/**
 * The type of the app `createApp` builds: its routes, inputs and JSON answers, for Hono's typed client (`hc`).
 * `@libos/client` wraps it; use that.
 */
export type AppType = ReturnType<typeof createApp>;
