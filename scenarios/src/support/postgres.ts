// The PostgreSQL server the PostgreSQL scenarios use (issue 15): LIBOS_TEST_PG_URL, default the local one CI finds or
// starts (trust auth), and a probe that says why it is unusable, so a suite can skip with one line instead of failing.
import pg from 'pg';
import { expandExecutes, kernelClient } from './round-trip-texts.js';

export { isPrepareTrip } from './round-trip-texts.js';

/** The test server's URL. */
export const PG_URL = process.env.LIBOS_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Whether a server answers at `url` (one short connection): `null` when it does, else the reason.
 *
 * @example
 * const unavailable = await probePostgres(PG_URL);
 * if (unavailable) console.log(`postgres: skipped (${unavailable})`);
 */
export async function probePostgres(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (err) {
    return (err as Error).message || String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A fresh schema of the test server for one test file: its name (prefix, pid, time) and the store URL on it.
 *
 * @example
 * const { schema, url } = freshSchema('t_hosts');
 * afterAll(() => dropSchema(schema));
 */
export function freshSchema(prefix: string): { readonly schema: string; readonly url: string } {
  const schema = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  return { schema, url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}` };
}

/** Drops `schema` (and everything in it) on the test server. */
export async function dropSchema(schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await c.end();
  }
}

/**
 * Runs `fn`, handing `seen` the text of every query the kernel's `pg` client sends meanwhile (the kernel's own copy
 * of `pg`, patched on its `Client.prototype.query` and restored after). A statement the kernel sent as `execute` of
 * a text it prepared (K-15.29) is handed as that text with its arguments in place (`round-trip-texts.ts`), unless
 * `asSent`.
 *
 * @example
 * const sent: string[] = [];
 * await watchQueries(() => rt.call(pid, 'get_current_time', {}), (text) => sent.push(text));
 */
export async function watchQueries<T>(fn: () => Promise<T>, seen: (text: string) => void, asSent = false): Promise<T> {
  const query = kernelClient.prototype.query;
  kernelClient.prototype.query = function watched(this: object, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    seen(typeof q !== 'string' ? String(q?.text) : asSent ? q : expandExecutes(this, q));
    return query.apply(this, args);
  };
  try {
    return await fn();
  } finally {
    kernelClient.prototype.query = query;
  }
}
