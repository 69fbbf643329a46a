// Setup of the `postgres` vitest project (issue 15): every runtime a test opens on the in-memory store
// (`openRuntime({ path: ':memory:' })`, directly or through a harness or `openTestRuntime`) opens instead on a fresh
// schema `t_<random>` of LIBOS_TEST_PG_URL, so the same test runs on PostgreSQL. Production code has no hook for
// this: the kernel's runtime module is mocked here. After the file, its runtimes still open are closed and its
// schemas dropped. A store on a file path or URL is left as the test asked.
import pg from 'pg';
import { afterAll, expect, vi } from 'vitest';
import type * as RuntimeModule from '../../../packages/kernel/src/runtime.js';
import { PG_URL } from './postgres.js';

const redirected = vi.hoisted(() => ({ count: 0, schemas: [] as string[], open: [] as { close(): Promise<void> }[] }));

vi.mock('../../../packages/kernel/src/runtime.js', async (importOriginal) => {
  const real = await importOriginal<typeof RuntimeModule>();
  const { randomBytes } = await import('node:crypto');
  const { PG_URL: url } = await import('./postgres.js');
  const openRuntime: typeof real.openRuntime = async (opts) => {
    if (opts.path !== ':memory:') return real.openRuntime(opts);
    const schema = `t_${randomBytes(8).toString('hex')}`;
    redirected.count += 1;
    redirected.schemas.push(schema);
    const rt = await real.openRuntime({ ...opts, path: `${url}${url.includes('?') ? '&' : '?'}schema=${schema}` });
    redirected.open.push(rt);
    return rt;
  };
  return { ...real, openRuntime };
});

afterAll(async () => {
  // A runtime the test left open keeps its pool and lease sessions: close it first (`close` twice is a no-op).
  try {
    // A file here that never opened one would only run its SQLite tests twice: it belongs in the config's list.
    if (redirected.count === 0)
      throw new Error(`${expect.getState().testPath}: opened no runtime on ':memory:'; list it in vitest.config.ts SQLITE_ONLY`);
    for (const rt of redirected.open.splice(0)) await rt.close();
  } finally {
    const schemas = redirected.schemas.splice(0);
    if (schemas.length > 0) {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        for (const schema of schemas) await client.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await client.end();
      }
    }
  }
});
