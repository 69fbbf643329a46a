import type { Command } from 'commander';
import { loadHostConfig } from '@libos/kernel';
import { serve } from '@libos/server';
import { openStandardRuntime } from '../compose.js';
import { EXIT, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';

interface ServeFlags {
  readonly port: string;
  readonly host: string;
  readonly token?: string;
}

function parsePort(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65_535) throw new UsageError(`--port must be an integer in 0..65535 (got ${JSON.stringify(text)}; 0 picks a free port)`);
  return n;
}

/** Resolves with the first of SIGINT, SIGTERM or `closed` (a `POST /api/shutdown`), then stops listening for them. */
function untilStopped(closed: Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    void closed.then(stop);
  });
}

/**
 * `libos serve`: opens the runtime on `--db` (holding its writer lease), serves it over HTTP on loopback (REST, SSE,
 * MCP; every route needs `Authorization: Bearer <token>`), prints `{url, token, db}` as one JSON line, and serves
 * until SIGINT, SIGTERM or `POST /api/shutdown`; then it closes the server and the runtime (releasing the lease)
 * and exits 0.
 */
export function registerServe(program: Command, kit: CommandKit): void {
  program
    .command('serve')
    .description('serve the store over HTTP on loopback (REST, SSE events, approvals, MCP); prints {url, token, db} as one JSON line; runs until Ctrl-C')
    .option('--port <n>', 'port (0 picks a free one)', '0')
    .option('--host <host>', 'a loopback host (127.0.0.1, ::1, localhost)', '127.0.0.1')
    .option('--token <token>', 'bearer token, 16+ visible characters (default: 32 random bytes as hex)')
    .action(
      kit.act(async (cmd: Command, f: ServeFlags) => {
        const o = kit.g(cmd);
        const port = parsePort(f.port);
        const hostConfig = o.config !== undefined ? loadHostConfig(o.config).config : undefined;
        const rt = await openStandardRuntime(o.db, undefined, hostConfig);
        try {
          const server = await serve({ runtime: rt, host: f.host, port, ...(f.token !== undefined ? { token: f.token } : {}) });
          try {
            process.stdout.write(`${JSON.stringify({ url: server.url, token: server.token, db: rt.location })}\n`);
            await untilStopped(server.closed);
          } finally {
            await server.close();
          }
        } finally {
          await rt.close();
        }
        return EXIT.ok;
      }),
    );
}
