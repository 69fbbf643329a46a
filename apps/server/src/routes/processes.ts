import { Hono } from 'hono';
import { isAbsolute } from 'node:path';
import { wire } from '@libos/kernel';
import { PROCESS_STATUSES } from '@libos/sdk';
import { BUDGET_FIELDS, type BudgetField } from '@libos/sdk';
import { z } from 'zod';
import { jsonBody, queryOf } from '../internal/parse.js';
import type { ServerContext } from '../internal/server-context.js';

const SpawnBody = z.strictObject({
  goal: z.string().refine((s) => s.trim() !== '', 'must be a non-empty string'),
  image: z.string().min(1).optional(),
  /** Budget limits of the new root, e.g. `{ "tool_calls": 50 }` (null: no limit of its own). */
  budget: z
    .strictObject(
      Object.fromEntries(BUDGET_FIELDS.map((f) => [f, z.number().int().min(1).nullable().optional()])) as Record<
        BudgetField,
        z.ZodOptional<z.ZodNullable<z.ZodNumber>>
      >,
    )
    .optional(),
  /** Its working directory: an absolute path (the workspace tools resolve relative paths from it). */
  working_directory: z.string().min(1).max(4096).refine(isAbsolute, 'must be an absolute path').optional(),
});
const ListQuery = z.strictObject({ status: z.enum(PROCESS_STATUSES).optional() });

/**
 * `GET /api/processes[?status=]` lists processes (oldest first); `POST /api/processes {goal, image?, budget?,
 * working_directory?}` spawns a root
 * process (201); `GET /api/processes/:pid` is one process with its budget (404 `process_not_found`).
 */
export function processRoutes(ctx: ServerContext) {
  const { rt } = ctx;
  return new Hono()
    .get('/processes', queryOf(ListQuery), async (c) => {
      const q = c.req.valid('query');
      const all = await rt.processes();
      return c.json((q.status ? all.filter((p) => p.status === q.status) : all).map(wire.processToWire));
    })
    .post('/processes', jsonBody(SpawnBody), async (c) => {
      const body = c.req.valid('json');
      const p = await rt.spawn({
        goal: body.goal,
        ...(body.image ? { image: body.image } : {}),
        ...(body.budget ? { budget: body.budget } : {}),
        ...(body.working_directory ? { workingDirectory: body.working_directory } : {}),
      });
      return c.json(wire.processToWire(p), 201);
    })
    .get('/processes/:pid', async (c) => {
      const pid = c.req.param('pid');
      const p = await rt.process(pid);
      return c.json(wire.processDetailToWire(p, await rt.budget(pid)));
    });
}
