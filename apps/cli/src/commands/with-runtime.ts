import type { Runtime } from '@libos/kernel';
import { openStandardRuntime } from '../compose.js';

export interface GlobalOptions {
  readonly db: string;
  readonly json: boolean;
}

/** Opens the runtime for one command and always closes it (releasing the writer lease). */
export async function withRuntime<T>(g: GlobalOptions, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = await openStandardRuntime(g.db);
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
