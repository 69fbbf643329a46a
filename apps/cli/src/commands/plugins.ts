import { dirname } from 'node:path';
import type { Command } from 'commander';
import { importPluginSpecs, openRuntime } from '@libos/kernel';
import { standardPlugins } from '../compose.js';
import { print, table } from '../output.js';
import type { CommandKit } from './kit.js';
import { hostConfigOf } from './with-runtime.js';

/**
 * `libos plugins`: what a command loads, with versions: the kernel's own plugins, the standard ones, those named by
 * `--plugin` and by the host config's `plugins` (in load order), each checked as `openRuntime` checks it. It opens
 * no store (an in-memory one only), so it works before `libos init` and beside a running server.
 */
export function registerPlugins(program: Command, kit: CommandKit): void {
  program
    .command('plugins')
    .description('list the plugins commands load (kernel, standard, --plugin, the config plugins key), with versions')
    .action(
      kit.act(async (cmd: Command) => {
        const o = kit.g(cmd);
        const specs = (cmd.optsWithGlobals() as { plugin?: string[] }).plugin ?? [];
        const loaded = hostConfigOf(o);
        const extra = await importPluginSpecs(specs, process.cwd());
        const rt = await openRuntime({
          path: ':memory:',
          plugins: [...standardPlugins(), ...extra],
          hostConfig: loaded.config,
          ...(loaded.path ? { pluginBaseDir: dirname(loaded.path) } : {}),
        });
        try {
          const list = rt.loadedPlugins();
          print(o, list, () =>
            table(
              list.map((p) => ({
                plugin: p.name,
                version: p.version,
                origin: p.origin === 'host' ? 'standard' : p.origin,
                from: p.spec,
                skills: p.skills.join(' ') || null,
                tools: p.tools,
              })),
              ['plugin', 'version', 'origin', 'from', 'skills', 'tools'],
            ),
          );
        } finally {
          await rt.close();
        }
      }),
    );
}
