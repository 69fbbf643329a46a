import { setTimeout as sleep } from 'node:timers/promises';
import { hostConfigForStore, loadHostConfig, type LoadedHostConfig, type Runtime } from '@libos/kernel';
import { LibosApiError, LibosClient } from '@libos/client';
import { isLibosError, LibosError } from '@libos/sdk';
import { openStandardRuntime } from '../compose.js';
import { localHost, type HostRuntime } from '../served/host-runtime.js';
import { remoteHost } from '../served/remote-host.js';
import { findServedStore, forgetServedStore, type ServedStore } from '../served/served-file.js';

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

/** How long a command waits for a served store's server to say what its scheduler does. */
const STATUS_TIMEOUT_MS = 5000;

/**
 * The refusal of a command that needs the store to itself (`run`, `code`) on a served store, saying what to do: the
 * server's background scheduler already runs the processes (follow them), or the server has none (stop it, or
 * restart it with a provider). Null when nothing answers at the recorded address: the record is then forgotten.
 */
async function servedRefusal(served: ServedStore): Promise<LibosError | null> {
  const where = `store ${served.db} is served by libos serve (pid ${served.pid}) at ${served.url}`;
  const details = { path: served.db, url: served.url, pid: served.pid };
  let status: { mode: string; state?: string };
  try {
    const client = new LibosClient({ url: served.url, token: served.token });
    status = (await Promise.race([
      client.schedulerStatus(),
      sleep(STATUS_TIMEOUT_MS).then(() => Promise.reject(new Error(`no answer within ${STATUS_TIMEOUT_MS} ms`))),
    ])) as { mode: string; state?: string };
  } catch (err) {
    if (err instanceof LibosApiError) {
      return new LibosError('store_locked', `${where}: this command needs the store to itself; stop the server first`, { details });
    }
    forgetServedStore(served);
    return null;
  }
  if (status.mode === 'background') {
    const message =
      `${where}, whose scheduler runs its processes in the background (${status.state ?? 'running'}): nothing to run here; ` +
      'follow them with libos ps and libos events --follow, hold or restart it with libos scheduler pause|resume ' +
      '(to run with a model of your own, stop the server first)';
    return new LibosError('store_locked', message, { details: { ...details, scheduler: status.state ?? null } });
  }
  const message =
    `${where}, which runs no scheduler: this command needs the store to itself; stop the server (Ctrl-C) and run ` +
    'again, or restart it with libos serve --provider openai|script [--script <file>] to run processes in the background';
  return new LibosError('store_locked', message, { details: { ...details, scheduler: null } });
}

/**
 * Opens the runtime for one command and always closes it (releasing the writer lease): for commands that need the
 * store to themselves (`run`, `code`). On a served store it refuses with `store_locked` (exit 1, one line) saying
 * what to do instead: follow the server's background scheduler, or stop the server or restart it with a provider.
 */
export async function withLocalRuntime<T>(g: GlobalOptions, fn: (rt: Runtime) => Promise<T>, opts: WithRuntimeOptions = {}): Promise<T> {
  const served = findServedStore(g.db);
  if (served) {
    const refusal = await servedRefusal(served);
    if (refusal) throw refusal;
  }
  const rt = await open(g, opts.waitForLeaseMs ?? 2000);
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
