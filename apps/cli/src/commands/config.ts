import type { Command } from 'commander';
import { print } from '../output.js';
import type { CommandKit } from './kit.js';
import { hostConfigOf } from './with-runtime.js';

/**
 * `libos config show`: the effective host config (every default filled in) and the file it came from: `--config
 * <path>`, else the `libos.config.json|yaml` next to the store, else none. The store is not opened.
 */
export function registerConfig(program: Command, kit: CommandKit): void {
  const config = program.command('config').description('the host config (libos.config.json|yaml next to the store, or --config <path>)');
  config
    .command('show')
    .description('print the effective host config, defaults filled in (--json: {path, config})')
    .action(
      kit.act(async (cmd: Command) => {
        const o = kit.g(cmd);
        const loaded = hostConfigOf(o);
        print(o, loaded, () => `# ${loaded.path ?? 'no config file: every default'}\n${JSON.stringify(loaded.config, null, 2)}`);
      }),
    );
}
