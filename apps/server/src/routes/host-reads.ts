import { Hono } from 'hono';
import { wire } from '@libos/kernel';
import { z } from 'zod';
import { queryOf } from '../internal/parse.js';
import { queryInt, seqParam } from '../internal/schemas.js';
import type { ServerContext } from '../internal/server-context.js';

const limit = queryInt(1, 10_000).optional();
const pid = z.string().min(1).max(64).optional();
const AuditQuery = z.strictObject({ pid, action: z.string().min(1).optional(), after: seqParam.optional(), limit });
const EventsQuery = z.strictObject({ pid, type: z.string().min(1).optional(), after: seqParam.optional(), limit });
const LlmCallsQuery = z.strictObject({ pid, limit });
const ObjectsQuery = z.strictObject({ ns: z.string().min(1).max(512).optional(), pid, limit });

/** The part of the Object Memory plugin's `objects` service this route uses (the server imports no plugin). */
interface ObjectLister {
  listObjects(q: { readonly namespace?: string; readonly ownerPid?: string; readonly limit?: number }): Promise<wire.ObjectMetaInput[]>;
}

/**
 * Runtime-wide reads, what the CLI's read commands show when the store is served (each filter is optional; an
 * unknown `pid` filter is 404 `process_not_found`):
 * `GET /api/audit[?pid&action&after&limit]` (pid = the actor), `/api/events[?pid&type&after&limit]`,
 * `/api/llm-calls[?pid&limit]` (without stored prompts and replies' full text: as recorded),
 * `/api/objects[?ns&pid&limit]` (Object metadata, never payloads; needs the Object Memory plugin),
 * `/api/skills` (the Skill catalog) and `/api/tools` (every registered tool name).
 */
export function hostReadRoutes(ctx: ServerContext) {
  const { rt } = ctx;
  const known = async (p: string | undefined) => {
    if (p !== undefined) await rt.process(p);
  };
  return new Hono()
    .get('/audit', queryOf(AuditQuery), async (c) => {
      const q = c.req.valid('query');
      await known(q.pid);
      return c.json((await rt.audit(q)).map(wire.auditToWire));
    })
    .get('/events', queryOf(EventsQuery), async (c) => {
      const q = c.req.valid('query');
      await known(q.pid);
      return c.json((await rt.events(q)).map(wire.eventToWire));
    })
    .get('/llm-calls', queryOf(LlmCallsQuery), async (c) => {
      const q = c.req.valid('query');
      await known(q.pid);
      return c.json((await rt.llmCalls(q)).map(wire.llmCallToWire));
    })
    .get('/objects', queryOf(ObjectsQuery), async (c) => {
      const q = c.req.valid('query');
      await known(q.pid);
      const query = {
        ...(q.ns !== undefined ? { namespace: q.ns } : {}),
        ...(q.pid !== undefined ? { ownerPid: q.pid } : {}),
        ...(q.limit !== undefined ? { limit: q.limit } : {}),
      };
      const rows = await rt.readService<ObjectLister, wire.ObjectMetaInput[]>('objects', (objects) => objects.listObjects(query));
      return c.json(rows.map(wire.objectMetaToWire));
    })
    .get('/skills', (c) => c.json(rt.skillCatalog().map(wire.skillToWire)))
    .get('/tools', (c) => c.json(rt.toolNames()));
}
