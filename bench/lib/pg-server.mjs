// The bench's PostgreSQL server (LIBOS_BENCH_PG_URL): its URL, a schema of a figure's own in it, and a connection
// outside any runtime (to drop that schema). The bench has no driver of its own: `pg` is the kernel's.
import { createRequire } from 'node:module';

/** The server the PostgreSQL figures run on. */
export const serverUrl = () => process.env.LIBOS_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** `pg` as the kernel resolves it. */
export const pg = () => createRequire(import.meta.resolve('@libos/kernel'))('pg');

/** `url` with its `schema` parameter set to `schema` (any given one replaced). */
export function withSchema(url, schema) {
  const u = new URL(url);
  u.searchParams.set('schema', schema);
  return u.toString();
}

/** Runs `fn(client)` on a connection of its own to the server, outside any runtime. */
export async function onServer(url, fn) {
  const { Client } = pg();
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops `schema` and everything in it. */
export const dropSchema = (url, schema) => onServer(url, (c) => c.query(`drop schema if exists ${schema} cascade`));
