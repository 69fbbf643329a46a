import { wire } from '@libos/kernel';
import type { Command } from 'commander';
import { LibosError } from '@libos/sdk';
import { errorFromResponse, LibosClient } from '@libos/client';
import { print } from '../output.js';
import { findServedStore } from '../served/served-file.js';
import type { CommandKit } from './kit.js';
import { withRuntime } from './with-runtime.js';

/**
 * `libos pause <pid>` / `libos resume <pid>`: the host's signals. A process the model provider failed is paused
 * with the error; `resume` makes it runnable again, so the next `libos run` (or a server's background scheduler) runs
 * it. `libos scheduler status|pause|resume`: the background scheduler of a served store (`libos serve --provider`).
 */
export function registerSignals(program: Command, kit: CommandKit): void {
  for (const signal of ['pause', 'resume'] as const) {
    program
      .command(`${signal} <pid>`)
      .description(
        signal === 'pause'
          ? 'pause a runnable process (nothing schedules it until a resume)'
          : 'resume a paused process (e.g. one paused by a provider failure): it becomes runnable',
      )
      .option('--reason <text>', 'why (kept with the pause)')
      .action(
        kit.act(async (cmd: Command, pid: string, f: { reason?: string }) => {
          const o = kit.g(cmd);
          await withRuntime(o, async (rt) => {
            const before = await rt.process(pid);
            const after = await rt.signal(pid, signal, f.reason);
            print(o, wire.processToWire(after), () => `${pid}: ${before.status} -> ${after.status}`);
          });
        }),
      );
  }

  const scheduler = program
    .command('scheduler')
    .description('the background scheduler of a served store (libos serve --provider): status, pause, resume');
  for (const action of ['status', 'pause', 'resume'] as const) {
    scheduler
      .command(action)
      .description(
        action === 'status'
          ? 'show its state, provider, quanta run and any error'
          : action === 'pause'
            ? 'start no new quantum (the running one finishes)'
            : 'start again',
      )
      .action(
        kit.act(async (cmd: Command) => {
          const o = kit.g(cmd);
          const served = findServedStore(o.db);
          if (!served)
            throw new LibosError(
              'conflict',
              `store ${o.db} is not served: start libos serve --provider <name> to run its scheduler in the background`,
              { details: { served: false } },
            );
          const api = new LibosClient({ url: served.url, token: served.token }).routes.api;
          const res = (action === 'status'
            ? await api.scheduler.$get()
            : action === 'pause'
              ? await api.scheduler.pause.$post({ json: {} })
              : await api.scheduler.resume.$post()) as unknown as Response;
          if (!res.ok) {
            const e = await errorFromResponse(res);
            throw new LibosError(e.code === 'conflict' ? 'conflict' : 'internal_error', e.message, e.details ? { details: e.details } : {});
          }
          const status = (await res.json()) as Record<string, unknown>;
          print(o, status, () =>
            status.mode === 'background'
              ? `scheduler ${String(status.state)} (${String(status.provider)} ${String(status.model)}), ${String(status.quanta)} ` +
                `quanta${status.busy ? ', a quantum running' : ''}${status.error ? `; paused by ${JSON.stringify(status.error)}` : ''}`
              : 'no background scheduler (libos serve --provider <name> runs one)',
          );
        }),
      );
  }
}
