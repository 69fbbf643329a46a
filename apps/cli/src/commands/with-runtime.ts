import { setTimeout as sleep } from 'node:timers/promises';
import type { Runtime } from '@libos/kernel';
import { isLibosError } from '@libos/sdk';
import { openStandardRuntime } from '../compose.js';

export interface GlobalOptions {
  readonly db: string;
  readonly json: boolean;
}

export interface WithRuntimeOptions {
  /**
   * How long to keep retrying while another runtime holds the store's writer lease (default 2000 ms), so short
   * commands run from two terminals take turns instead of failing; 0 fails at once with `store_locked`.
   */
  readonly waitForLeaseMs?: number;
}

async function open(db: string, waitMs: number): Promise<Runtime> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await openStandardRuntime(db);
    } catch (err) {
      if (!isLibosError(err) || err.code !== 'store_locked' || Date.now() >= deadline) throw err;
      await sleep(50);
    }
  }
}

/** Opens the runtime for one command and always closes it (releasing the writer lease). */
export async function withRuntime<T>(g: GlobalOptions, fn: (rt: Runtime) => Promise<T>, opts: WithRuntimeOptions = {}): Promise<T> {
  const rt = await open(g.db, opts.waitForLeaseMs ?? 2000);
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
