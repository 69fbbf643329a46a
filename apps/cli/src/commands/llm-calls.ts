import { wire } from '@libos/kernel';
import type { Command } from 'commander';
import { print, table } from '../output.js';
import type { CommandKit } from './kit.js';
import { parsePositiveInt } from './parse.js';
import { withRuntime } from './with-runtime.js';

/** `libos llm-calls`: every recorded model call with its tokens, latency and error. */
export function registerLlmCalls(program: Command, kit: CommandKit): void {
  program
    .command('llm-calls')
    .description('recorded model calls, oldest first (model, tokens, latency, error)')
    .option('--pid <pid>', 'only this process')
    .option('--limit <n>', 'at most n rows', '100')
    .action(
      kit.act(async (cmd: Command, f: { pid?: string; limit: string }) => {
        const o = kit.g(cmd);
        const limit = parsePositiveInt(f.limit, '--limit');
        await withRuntime(o, async (rt) => {
          if (f.pid) await rt.process(f.pid);
          const rows = await rt.llmCalls({ limit, ...(f.pid ? { pid: f.pid } : {}) });
          // --json leaves out the stored prompts and replies (they can be large); the store keeps them.
          const brief = rows.map((r) => {
            const { request: _request, response: _response, ...rest } = wire.llmCallToWire(r);
            return rest;
          });
          print(o, brief, () =>
            table(
              brief.map((r) => ({
                id: r.id,
                pid: r.pid,
                status: r.status,
                model: `${r.provider}/${r.model}`,
                tokens: r.total_tokens === null ? null : `${r.prompt_tokens ?? '?'}+${r.completion_tokens ?? '?'}=${r.total_tokens}`,
                latency: `${r.latency_ms} ms`,
                error: r.error && r.error.length > 60 ? `${r.error.slice(0, 59)}…` : r.error,
              })),
              ['id', 'pid', 'status', 'model', 'tokens', 'latency', 'error'],
            ),
          );
        });
      }),
    );
}
