import { Hono } from 'hono';
import { PROCESS_STATUSES } from '@libos/kernel';
import { z } from 'zod';
import { readBody, readQuery } from '../internal/parse.js';
import type { ServerContext } from '../internal/server-context.js';

const SpawnBody = z.strictObject({
  goal: z.string().refine((s) => s.trim() !== '', 'must be a non-empty string'),
  image: z.string().min(1).optional(),
});
const ListQuery = z.strictObject({ status: z.enum(PROCESS_STATUSES).optional() });

/**
 * `GET /api/processes[?status=]` lists processes (oldest first); `POST /api/processes {goal, image?}` spawns a root
 * process (201); `GET /api/processes/:pid` is one process with its budget (404 `process_not_found`).
 */
export function processRoutes(ctx: ServerContext): Hono {
  const { rt } = ctx;
  return new Hono()
    .get('/processes', async (c) => {
      const q = readQuery(c, ListQuery);
      const all = await rt.processes();
      return c.json(q.status ? all.filter((p) => p.status === q.status) : all);
    })
    .post('/processes', async (c) => {
      const body = await readBody(c, SpawnBody);
      const p = await rt.spawn({ goal: body.goal, ...(body.image ? { image: body.image } : {}) });
      return c.json(p, 201);
    })
    .get('/processes/:pid', async (c) => {
      const pid = c.req.param('pid');
      const p = await rt.process(pid);
      return c.json({ ...p, budget: await rt.budget(pid) });
    });
}
