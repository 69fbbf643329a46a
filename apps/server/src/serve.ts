import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { LlmProfile, LlmProvider, Runtime } from '@libos/kernel';
import { LibosError } from '@libos/sdk';
import { createApp } from './app.js';
import { assertUsableToken, newToken } from './auth.js';
import { BackgroundScheduler, type SchedulerStatus } from './internal/background-scheduler.js';
import { reportToStderr } from './internal/errors.js';
import { isLoopbackHost, originOf } from './internal/loopback.js';
import type { SnapshotLimits } from './routes/snapshot.js';

export interface ServeOptions {
  readonly runtime: Runtime;
  /** Loopback by default (`127.0.0.1`); any other host is refused unless `allowNonLoopback` is set. */
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** The bearer token (16 to 512 visible ASCII characters); default: 32 random bytes as hex. */
  readonly token?: string;
  /** The model `POST /api/scheduler/run` uses; without one that route is 409. */
  readonly provider?: LlmProvider;
  /**
   * Run the scheduler in the background with `provider` (required then) from the start: processes run as work
   * arrives, `POST /api/scheduler/pause|resume` control it, progress is on the SSE stream; `close()` stops it first.
   */
  readonly background?: boolean;
  /** The LLM profile the background scheduler runs with (its `parallel_tool_calls`), if any. */
  readonly profile?: LlmProfile | null;
  /**
   * Serve on a non-loopback host (anyone who can reach it and holds the token controls the runtime); the Host and
   * Origin headers may then name `host` too.
   */
  readonly allowNonLoopback?: boolean;
  /** Milliseconds between SSE heartbeat comments (default 15,000). */
  readonly heartbeatMs?: number;
  /** At most this many events are replayed to an SSE cursor (default 1,000). */
  readonly sseReplayLimit?: number;
  /** Bounds of `GET /api/snapshot` (defaults: 200 processes, 100 pending human requests, 50 events). */
  readonly snapshotLimits?: Partial<SnapshotLimits>;
  /** The built web console served at `/` (default: the one bundled with the server). */
  readonly consoleDir?: string;
  /** Receives internal errors no response can carry; default: one line on stderr. */
  readonly onError?: (err: unknown) => void;
}

export interface RunningServer {
  /** e.g. `http://127.0.0.1:43121` */
  readonly url: string;
  readonly token: string;
  /** The web console with the token in the URL fragment (which browsers never send), e.g. `http://127.0.0.1:43121/#token=…`. */
  readonly consoleUrl: string;
  /** The background scheduler's status (`serve({ background: true })`), else undefined. */
  schedulerStatus(): SchedulerStatus | undefined;
  /** Resolves once the server has stopped (by `close()` or `POST /api/shutdown`). */
  readonly closed: Promise<void>;
  /**
   * Stops the background scheduler (a model call in flight is cancelled and its process paused), stops listening and
   * ends open connections (SSE streams included). Idempotent. Does not close the runtime.
   */
  close(): Promise<void>;
}

/**
 * Serves a runtime over HTTP (REST, SSE, MCP; see `createApp`) on loopback, every route behind a bearer token.
 *
 * @example
 * const server = await serve({ runtime: rt });
 * const res = await fetch(`${server.url}/api/health`, { headers: { authorization: `Bearer ${server.token}` } });
 * await server.close();
 */
export async function serve(opts: ServeOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && opts.allowNonLoopback !== true) {
    throw new LibosError(
      'invalid_arguments',
      `host: ${JSON.stringify(host)} is not a loopback address; the server listens on loopback only unless allowNonLoopback is set`,
      { details: { field: 'host', host } },
    );
  }
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new LibosError('invalid_arguments', `port: must be an integer in 0..65535 (got ${port})`, { details: { field: 'port' } });
  const token = opts.token ?? newToken();
  assertUsableToken(token);
  if (opts.background && !opts.provider) {
    throw new LibosError(
      'invalid_arguments',
      'background: a background scheduler needs a provider (serve({ provider, background: true }))',
      { details: { field: 'provider' } },
    );
  }

  let close: () => Promise<void> = async () => {};
  // The Host guard wants the listening port: with port 0 it is known once listening, before any request arrives.
  let listeningPort = port;
  const onError = opts.onError ?? reportToStderr;
  const scheduler =
    opts.background && opts.provider
      ? new BackgroundScheduler(opts.runtime, opts.provider, { profile: opts.profile ?? null, onError })
      : undefined;
  const app = createApp({
    runtime: opts.runtime,
    token,
    hosts: { port: () => listeningPort, hostnames: isLoopbackHost(host) ? [] : [host] },
    onShutdown: () => void close().catch(onError),
    ...(opts.provider ? { provider: opts.provider } : {}),
    ...(scheduler ? { scheduler } : {}),
    ...(opts.heartbeatMs !== undefined ? { heartbeatMs: opts.heartbeatMs } : {}),
    ...(opts.sseReplayLimit !== undefined ? { sseReplayLimit: opts.sseReplayLimit } : {}),
    ...(opts.snapshotLimits ? { snapshotLimits: opts.snapshotLimits } : {}),
    ...(opts.consoleDir !== undefined ? { consoleDir: opts.consoleDir } : {}),
    onError,
  });
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host }) as Server;
  await new Promise<void>((resolve, reject) => {
    const failed = (err: unknown) => reject(listenError(err, host, port));
    server.once('error', failed);
    server.listen(port, host, () => {
      listeningPort = (server.address() as AddressInfo).port;
      server.off('error', failed);
      resolve();
    });
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  close = () =>
    (closing ??= (async () => {
      await scheduler?.stop();
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Open SSE streams never end by themselves: end every connection so close() completes.
        server.closeAllConnections();
      });
    })().then(resolveClosed));
  if (scheduler) {
    try {
      await scheduler.start();
    } catch (err) {
      await close();
      throw err;
    }
  }
  const url = originOf(host, listeningPort);
  return { url, token, consoleUrl: `${url}/#token=${token}`, schedulerStatus: () => scheduler?.status(), closed, close: () => close() };
}

/** A listen failure as the caller shows it: a busy port is `address_in_use` naming the address (one line). */
function listenError(err: unknown, host: string, port: number): unknown {
  if ((err as NodeJS.ErrnoException | null)?.code !== 'EADDRINUSE') return err;
  const message = `port: ${host}:${port} is already in use (another server is listening there); choose another port, or 0 for a free one`;
  return new LibosError('address_in_use', message, { details: { field: 'port', host, port }, cause: err });
}
