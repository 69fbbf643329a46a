import { setTimeout as sleep } from 'node:timers/promises';
import { hostConfigForStore, loadHostConfig, type LoadedHostConfig, type Runtime } from '@libos/kernel';
import { isLibosError, LibosError } from '@libos/sdk';
import { openStandardRuntime } from '../compose.js';
import { localHost, type HostRuntime } from '../served/host-runtime.js';
import { remoteHost } from '../served/remote-host.js';
import { findServedStore, forgetServedStore } from '../served/served-file.js';

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

/**
 * Runs a store-level command: against the server when `libos serve` serves the store (its record beside the store
 * names a live process), else on the runtime opened for this command and always closed (releasing the writer lease).
 */
export async function withRuntime<T>(g: GlobalOptions, fn: (rt: HostRuntime) => Promise<T>, opts: WithRuntimeOptions = {}): Promise<T> {
  const served = findServedStore(g.db);
  if (served) {
    const host = await remoteHost(served).catch((err: unknown) => {
      // Nothing listens at the recorded address (a crashed server whose pid lives on in another process): forget it.
      if (!isLibosError(err) || err.details?.unreachable !== true) throw err;
      forgetServedStore(served);
      return null;
    });
    if (host) return fn(host);
  }
  return withLocalRuntime(g, (rt) => fn(localHost(rt)), opts);
}

/**
 * Opens the runtime for one command and always closes it (releasing the writer lease): for commands that need the
 * store to themselves (`run`, `code`). A served store is refused with `store_locked` naming the server.
 */
export async function withLocalRuntime<T>(g: GlobalOptions, fn: (rt: Runtime) => Promise<T>, opts: WithRuntimeOptions = {}): Promise<T> {
  const served = findServedStore(g.db);
  if (served) {
    const message = `store ${served.db} is served by libos serve (pid ${served.pid}) at ${served.url}: this command needs the store to itself; stop the server first (its scheduler runs with libos serve --provider)`;
    throw new LibosError('store_locked', message, { details: { path: served.db, url: served.url, pid: served.pid } });
  }
  const rt = await open(g, opts.waitForLeaseMs ?? 2000);
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
