import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Runtime } from '@libos/kernel';
import { isLibosError } from '@libos/sdk';

export interface ServeOptions {
  readonly runtime: Runtime;
  /** Loopback only by default. */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
}

export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves the runtime's read API over HTTP on loopback: `GET /api/health`, `GET /api/processes`,
 * `GET /api/processes/:pid`. (The full REST, SSE, MCP and console surface grows here.)
 *
 * @example
 * const server = await serve({ runtime: rt });
 * await fetch(`${server.url}/api/health`);
 */
export async function serve(opts: ServeOptions): Promise<RunningServer> {
  const rt = opts.runtime;
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = async () => {
      if (req.method !== 'GET') return send(405, { error: { code: 'invalid_arguments', message: `method ${req.method} is not allowed` } });
      if (url.pathname === '/api/health') return send(200, { ok: true, db: rt.location });
      if (url.pathname === '/api/processes') return send(200, await rt.processes());
      const m = /^\/api\/processes\/([^/]+)$/.exec(url.pathname);
      if (m) return send(200, await rt.process(decodeURIComponent(m[1]!)));
      return send(404, { error: { code: 'not_found', message: `no route ${url.pathname}` } });
    };
    route().catch((err: unknown) => {
      if (isLibosError(err)) send(err.httpStatus, { error: err.toJSON() });
      else send(500, { error: { code: 'internal_error', message: err instanceof Error ? err.message : String(err) } });
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
