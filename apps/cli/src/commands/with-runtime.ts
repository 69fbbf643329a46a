import { setTimeout as sleep } from 'node:timers/promises';
import { hostConfigForStore, loadHostConfig, type LoadedHostConfig, type Runtime } from '@libos/kernel';
import { isLibosError } from '@libos/sdk';
import { openStandardRuntime } from '../compose.js';

export interface GlobalOptions {
  readonly db: string;
  readonly json: boolean;
  /** `--config <path>`: the host config file (else the `libos.config.json|yaml` next to the store, else defaults). */
  readonly config?: string;
}

/**
 * The host config a command uses: `--config <path>`, else the file next to the store, else all defaults. Read and
 * validated before any store is opened, so a bad config fails the command with nothing written.
 */
export function hostConfigOf(g: GlobalOptions): LoadedHostConfig {
  return g.config !== undefined ? loadHostConfig(g.config) : hostConfigForStore(g.db);
}

export interface WithRuntimeOptions {
  /**
   * How long to keep retrying while another runtime holds the store's writer lease (default 2000 ms), so short
   * commands run from two terminals take turns instead of failing; 0 fails at once with `store_locked`.
   */
  readonly waitForLeaseMs?: number;
}

async function open(g: GlobalOptions, waitMs: number): Promise<Runtime> {
  const hostConfig = g.config !== undefined ? loadHostConfig(g.config).config : undefined;
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await openStandardRuntime(g.db, undefined, hostConfig);
    } catch (err) {
      if (!isLibosError(err) || err.code !== 'store_locked' || Date.now() >= deadline) throw err;
      await sleep(50);
    }
  }
}

/** Opens the runtime for one command and always closes it (releasing the writer lease). */
export async function withRuntime<T>(g: GlobalOptions, fn: (rt: Runtime) => Promise<T>, opts: WithRuntimeOptions = {}): Promise<T> {
  const rt = await open(g, opts.waitForLeaseMs ?? 2000);
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
