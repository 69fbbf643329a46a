import { openRuntime, type Runtime } from '@libos/kernel';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { serve, type RunningServer } from './index.js';

let rt: Runtime;
let server: RunningServer;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:' });
  server = await serve({ runtime: rt });
});
afterEach(async () => {
  await server.close();
  await rt.close();
});

it('serves health and processes on loopback; an unknown pid is a 404 with its error code', async () => {
  expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(await (await fetch(`${server.url}/api/health`)).json()).toMatchObject({ ok: true });
  const p = await rt.spawn({ goal: 'x' });
  const list = (await (await fetch(`${server.url}/api/processes`)).json()) as { pid: string }[];
  expect(list.map((x) => x.pid)).toEqual([p.pid]);
  const missing = await fetch(`${server.url}/api/processes/pid_0000000000000000`);
  expect(missing.status).toBe(404);
  expect(await missing.json()).toMatchObject({ error: { code: 'process_not_found' } });
});
