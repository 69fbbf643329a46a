import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { serve, type RunningServer, type ServeOptions } from '../../serve.js';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly body: T;
}

export interface ApiInit {
  readonly method?: string;
  /** JSON-encoded as the body. */
  readonly json?: unknown;
  /** Sent as the body as it is (for malformed JSON). */
  readonly raw?: string;
  /** Overrides the server's token; `null` sends no Authorization header. */
  readonly token?: string | null;
}

export interface Harness {
  readonly rt: Runtime;
  readonly server: RunningServer;
  /** One request; answers the status and the parsed JSON body. */
  api<T = any>(path: string, init?: ApiInit): Promise<ApiResponse<T>>;
  stop(): Promise<void>;
}

/** A runtime with the standard plugins on an in-memory store, served on 127.0.0.1 (port 0). */
export async function startServer(opts: Omit<ServeOptions, 'runtime'> = {}): Promise<Harness> {
  const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), tasks(), session()] });
  const server = await serve({ runtime: rt, ...opts });
  return {
    rt,
    server,
    async api(path, init = {}) {
      const token = init.token === undefined ? server.token : init.token;
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      const body = init.raw ?? (init.json === undefined ? undefined : JSON.stringify(init.json));
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${server.url}${path}`, {
        method: init.method ?? (body === undefined ? 'GET' : 'POST'),
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      return { status: res.status, body: (await res.json()) as any };
    },
    async stop() {
      await server.close();
      await rt.close();
    },
  };
}
