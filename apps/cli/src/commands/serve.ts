import { type Command, Option } from 'commander';
import { loadHostConfig, type LlmProfile, type LlmProvider } from '@libos/kernel';
import { serve } from '@libos/server';
import { openStandardRuntime } from '../compose.js';
import { EXIT, UsageError } from '../output.js';
import { recordServedFile, removeServedFile } from '../served/served-file.js';
import type { CommandKit } from './kit.js';
import { chooseProvider, scriptedProvider } from './run.js';
import { hostConfigOf } from './with-runtime.js';

interface ServeFlags {
  readonly port: string;
  readonly host: string;
  readonly token?: string;
  readonly provider?: 'openai' | 'script' | 'scripted';
  readonly script?: string;
  readonly profile?: string;
}

function parsePort(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 65_535)
    throw new UsageError(`--port must be an integer in 0..65535 (got ${JSON.stringify(text)}; 0 picks a free port)`);
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
 * MCP; every route needs `Authorization: Bearer <token>`), records `{url, token, pid, db}` in `<store>.serve.json`
 * (0600) so other `libos` commands on the store go through the server, prints `{url, token, db, pid, scheduler,
 * console}` as one JSON line (`console`: the web console's address, the token in its fragment), and serves until
 * SIGINT, SIGTERM or `POST /api/shutdown`; then it stops the scheduler, closes the server and the runtime (releasing
 * the lease), removes the record and exits 0. With `--provider` (or `--profile`) the scheduler runs in the
 * background: processes run as work arrives, `POST /api/scheduler/pause|resume` control it, and the progress is on
 * the SSE stream.
 */
export function registerServe(program: Command, kit: CommandKit): void {
  program
    .command('serve')
    .description(
      'serve the store over HTTP on loopback (REST, SSE events, approvals, MCP); other libos commands on the store then go through it; ' +
        'prints {url, token, db, pid, scheduler} as one JSON line; runs until Ctrl-C',
    )
    .option('--port <n>', 'port (0 picks a free one)', '0')
    .option('--host <host>', 'a loopback host (127.0.0.1, ::1, localhost)', '127.0.0.1')
    .option('--token <token>', 'bearer token, 16+ visible characters (default: 32 random bytes as hex)')
    .addOption(
      new Option(
        '--provider <name>',
        'run the scheduler in the background with this model: openai (LIBOS_OPENAI_* env) or script (needs --script)',
      ).choices(['openai', 'script', 'scripted']),
    )
    .option('--script <file>', 'with --provider script: the scripted turns (.json, .yaml or .yml)')
    .option('--profile <name>', 'run the scheduler in the background with this LLM profile of the host config')
    .action(
      kit.act(async (cmd: Command, f: ServeFlags) => {
        const o = kit.g(cmd);
        const port = parsePort(f.port);
        const background = f.provider !== undefined || f.profile !== undefined;
        if (!background && f.script !== undefined) throw new UsageError('serve: --script applies only with --provider script');
        if (f.provider !== undefined && f.provider !== 'openai' && f.script === undefined && f.profile === undefined) {
          throw new UsageError('serve: --provider script needs --script <file> (.json, .yaml or .yml)');
        }
        const flags = {
          provider: f.provider === 'openai' ? ('openai' as const) : ('scripted' as const),
          ...(f.script !== undefined ? { script: f.script } : {}),
          ...(f.profile !== undefined ? { profile: f.profile } : {}),
        };
        // Settled before the store is opened: a bad flag, script or profile writes nothing.
        const choice = background ? await chooseProvider(flags, hostConfigOf(o).config, f.provider !== undefined, process.env) : null;
        const hostConfig = o.config !== undefined ? loadHostConfig(o.config).config : undefined;
        const rt = await openStandardRuntime(o.db, undefined, hostConfig);
        let record: string | null = null;
        try {
          let provider: LlmProvider | undefined;
          let profile: LlmProfile | null = null;
          if (choice) {
            provider = choice.kind === 'openai' ? choice.provider : await scriptedProvider(rt, choice.script, choice.model);
            profile = choice.profile;
          }
          const server = await serve({
            runtime: rt,
            host: f.host,
            port,
            ...(f.token !== undefined ? { token: f.token } : {}),
            ...(provider ? { provider, background: true, profile } : {}),
          });
          try {
            record = recordServedFile({ url: server.url, token: server.token, pid: process.pid, db: rt.location });
            const scheduler = provider ? { provider: provider.name, model: provider.model, profile: profile?.name ?? null } : null;
            const line = { url: server.url, token: server.token, db: rt.location, pid: process.pid, scheduler, console: server.consoleUrl };
            process.stdout.write(`${JSON.stringify(line)}\n`);
            await untilStopped(server.closed);
          } finally {
            await server.close();
          }
        } finally {
          removeServedFile(record);
          await rt.close();
        }
        return EXIT.ok;
      }),
    );
}
