import { Hono } from 'hono';
import { wire } from '@libos/kernel';
import { z } from 'zod';
import { queryOf } from '../internal/parse.js';
import { humanStatus, queryBool, queryInt, seqParam } from '../internal/schemas.js';
import type { ServerContext } from '../internal/server-context.js';

const limit = queryInt(1, 10_000).optional();
const MessagesQuery = z.strictObject({ limit: queryInt(1, 1000).optional(), unread: queryBool.optional() });
const LlmCallsQuery = z.strictObject({ limit });
const AuditQuery = z.strictObject({ after: seqParam.optional(), limit, action: z.string().min(1).optional() });
const EventsQuery = z.strictObject({ after: seqParam.optional(), limit, type: z.string().min(1).optional() });
const CapabilitiesQuery = z.strictObject({ all: queryBool.optional() });
const HumanQuery = z.strictObject({ status: humanStatus.optional() });

/**
 * Read-only views of one process (each 404s for an unknown pid; bad query parameters are 400):
 * `GET /api/processes/:pid/messages[?limit&unread]`, `/llm-calls[?limit]`, `/audit[?after&limit&action]` (records
 * it acted on), `/events[?after&limit&type]`, `/capabilities[?all]`, `/human-requests[?status]`.
 */
export function processReadRoutes(ctx: ServerContext) {
  const { rt } = ctx;
  return new Hono()
    .get('/processes/:pid/messages', queryOf(MessagesQuery), async (c) => {
      const q = c.req.valid('query');
      const pid = c.req.param('pid');
      await rt.process(pid);
      const opts = { includeAcked: q.unread !== true, ...(q.limit !== undefined ? { limit: q.limit } : {}) };
      return c.json((await rt.messages(pid, opts)).map(wire.messageToWire));
    })
    .get('/processes/:pid/llm-calls', queryOf(LlmCallsQuery), async (c) => {
      const q = c.req.valid('query');
      const pid = c.req.param('pid');
      await rt.process(pid);
      return c.json((await rt.llmCalls({ pid, ...(q.limit !== undefined ? { limit: q.limit } : {}) })).map(wire.llmCallToWire));
    })
    .get('/processes/:pid/audit', queryOf(AuditQuery), async (c) => {
      const q = c.req.valid('query');
      const pid = c.req.param('pid');
      await rt.process(pid);
      return c.json((await rt.audit({ pid, ...q })).map(wire.auditToWire));
    })
    .get('/processes/:pid/events', queryOf(EventsQuery), async (c) => {
      const q = c.req.valid('query');
      const pid = c.req.param('pid');
      await rt.process(pid);
      return c.json((await rt.events({ pid, ...q })).map(wire.eventToWire));
    })
    .get('/processes/:pid/capabilities', queryOf(CapabilitiesQuery), async (c) => {
      const q = c.req.valid('query');
      const pid = c.req.param('pid');
      return c.json((await rt.capabilities(pid, { includeInactive: q.all === true })).map(wire.capabilityToWire));
    })
    .get('/processes/:pid/human-requests', queryOf(HumanQuery), async (c) => {
      const q = c.req.valid('query');
      const pid = c.req.param('pid');
      await rt.process(pid);
      return c.json((await rt.humanRequests({ pid, ...q })).map(wire.humanRequestToWire));
    });
}
