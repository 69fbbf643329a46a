import type { MiddlewareHandler } from 'hono';
import { LibosError } from '@libos/sdk';
import { errorResponse } from './internal/errors.js';
import { isLoopbackHost } from './internal/loopback.js';

export interface HostGuardOptions {
  /** The port the Host header must name (the server's listening port; a function when it is known only after listen). Absent: any. */
  readonly port?: number | (() => number);
  /** Hostnames accepted in Host and Origin besides the loopback ones (the host a non-loopback server was started on). */
  readonly hostnames?: readonly string[];
}

/** `name` or `[v6]`, then an optional `:port`; nothing else (no userinfo, path or trailing dot tricks). */
const HOST_RE = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i;
const ORIGIN_RE = /^(https?):\/\/(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i;

const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();

/**
 * DNS rebinding guard for every route (REST, SSE, MCP): `Host` must name a loopback host (`localhost`, `127.0.0.1`,
 * `[::1]`, or one of `hostnames`) with the server's port; `Origin` must be absent or an http(s) origin on such a
 * host (any port). Anything else is 403 `permission_denied` naming the header, before auth or any route runs.
 * A request without a Host header (an in-process `app.request`) is judged by its URL's host.
 *
 * @example
 * app.use('*', hostGuard({ port: 8080 }));
 */
export function hostGuard(opts: HostGuardOptions = {}): MiddlewareHandler {
  const extra = new Set((opts.hostnames ?? []).map(bare));
  const allowedName = (hostname: string) => isLoopbackHost(hostname) || extra.has(bare(hostname));
  const expectedPort = typeof opts.port === 'function' ? opts.port : () => opts.port as number | undefined;
  return async (c, next) => {
    const hostHeader = c.req.header('host');
    const host = hostHeader ?? new URL(c.req.url).host;
    const port = expectedPort();
    const h = HOST_RE.exec(host);
    if (!h || !allowedName(h[1]!) || (port !== undefined && Number(h[2] ?? 80) !== port)) {
      const names = ['localhost', '127.0.0.1', '[::1]', ...(opts.hostnames ?? [])].join(', ');
      const want = `a loopback host (${names})${port !== undefined ? ` with port ${port}` : ''}`;
      const shown = hostHeader === undefined ? 'missing' : JSON.stringify(clip(hostHeader));
      return refuse(c, 'host', hostHeader, `Host header ${shown} is not allowed: send ${want}`);
    }
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      const o = ORIGIN_RE.exec(origin);
      if (!o || !allowedName(o[2]!)) {
        const why = 'send none, or an http(s) origin on a loopback host';
        return refuse(c, 'origin', origin, `Origin header ${JSON.stringify(clip(origin))} is not allowed: ${why}`);
      }
    }
    await next();
  };
}

const clip = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

function refuse(c: Parameters<MiddlewareHandler>[0], header: 'host' | 'origin', value: string | undefined, message: string): Response {
  const details = { reason: `${header}_not_allowed`, header, ...(value !== undefined ? { value: clip(value) } : {}) };
  return errorResponse(c, new LibosError('permission_denied', message, { details }));
}
