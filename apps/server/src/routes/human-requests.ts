import { Hono } from 'hono';
import { wire, type Runtime } from '@libos/kernel';
import { LibosError, type HumanRequest } from '@libos/sdk';
import { z } from 'zod';
import { jsonBody, queryOf } from '../internal/parse.js';
import { humanSender, humanStatus } from '../internal/schemas.js';
import type { ServerContext } from '../internal/server-context.js';

const RespondBody = z
  .strictObject({
    approved: z.boolean(),
    answer: z.string().max(8000).optional(),
    decision: z.strictObject({ policy: z.enum(['always_allow', 'ask_each_time', 'always_deny']) }).optional(),
    responder: humanSender.optional(),
  })
  .superRefine((b, ctx) => {
    const policy = b.decision?.policy;
    if (b.approved && policy === 'always_deny')
      ctx.addIssue({ code: 'custom', path: ['decision', 'policy'], message: 'always_deny contradicts approved: true' });
    if (!b.approved && policy === 'always_allow')
      ctx.addIssue({ code: 'custom', path: ['decision', 'policy'], message: 'always_allow contradicts approved: false' });
  });
const CancelBody = z.strictObject({ reason: z.string().min(1).max(2000).optional() });
const ListQuery = z.strictObject({ status: humanStatus.optional(), pid: z.string().min(1).optional() });

/** The pending request `id`; 404 when there is none, 409 `human_request_not_pending` when it is settled. */
async function pendingRequest(rt: Runtime, id: string): Promise<HumanRequest> {
  const pending = (await rt.humanRequests({ status: 'pending' })).find((r) => r.id === id);
  if (pending) return pending;
  const settled = (await rt.humanRequests()).find((r) => r.id === id);
  if (!settled) throw new LibosError('human_request_not_found', `human request ${id} does not exist`, { details: { id } });
  throw new LibosError(
    'human_request_not_pending',
    `human request ${id} is already ${settled.status}; only a pending request can be answered`,
    { details: { id, status: settled.status } },
  );
}

/**
 * The human queue: `GET /api/human-requests[?status&pid]`; `POST /api/human-requests/:id/respond {approved,
 * answer?, decision?: {policy}, responder?}` answers a pending request (409 when not pending; 400 for
 * approve + always_deny, reject + always_allow, a policy on a question, or an approved question without an
 * answer); `POST /api/human-requests/:id/cancel {reason?}` settles it as cancelled. Answering wakes the process
 * when it settles its wait.
 */
export function humanRequestRoutes(ctx: ServerContext) {
  const { rt } = ctx;
  return new Hono()
    .get('/human-requests', queryOf(ListQuery), async (c) => {
      const q = c.req.valid('query');
      return c.json((await rt.humanRequests(q)).map(wire.humanRequestToWire));
    })
    .post('/human-requests/:id/respond', jsonBody(RespondBody), async (c) => {
      const id = c.req.param('id');
      const body = c.req.valid('json');
      const req = await pendingRequest(rt, id);
      if (req.kind === 'question' && body.decision)
        throw new LibosError('invalid_arguments', `decision: applies to permission requests; ${id} is a question`, {
          details: { field: 'decision' },
        });
      if (req.kind === 'question' && body.approved && (body.answer === undefined || body.answer.trim() === '')) {
        throw new LibosError(
          'invalid_arguments',
          `answer: approving a question needs a non-empty answer (${id} asks: ${req.prompt.split('\n')[0]})`,
          { details: { field: 'answer' } },
        );
      }
      const settled = await rt.answerHuman(id, {
        approved: body.approved,
        responder: body.responder ?? 'human:owner',
        ...(body.answer !== undefined ? { answer: body.answer } : {}),
        ...(body.decision ? { decision: body.decision.policy } : {}),
      });
      return c.json(wire.humanRequestToWire(settled));
    })
    .post('/human-requests/:id/cancel', jsonBody(CancelBody), async (c) => {
      const id = c.req.param('id');
      const body = c.req.valid('json');
      await pendingRequest(rt, id);
      return c.json(wire.humanRequestToWire(await rt.cancelHumanRequest(id, body.reason ?? 'cancelled over HTTP')));
    });
}
