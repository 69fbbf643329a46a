import { Hono } from 'hono';
import { wire } from '@libos/kernel';
import { z } from 'zod';
import { refuseUnconfirmed } from '../internal/confirmation.js';
import { jsonBody } from '../internal/parse.js';
import { humanSender } from '../internal/schemas.js';
import type { ServerContext } from '../internal/server-context.js';

const label = z.string().regex(/^[^\s]{1,64}$/, 'must be 1 to 64 characters without spaces');

const CallBody = z.strictObject({
  tool: z.string().min(1),
  args: z.record(z.string(), z.unknown()).optional(),
  confirmed: z.boolean().optional(),
});
const MessageBody = z.strictObject({
  payload: z.unknown().refine((v) => v !== undefined, 'is required'),
  channel: label.optional(),
  kind: label.optional(),
  interrupt: z.boolean().optional(),
  from: humanSender.optional(),
});
const SignalBody = z.strictObject({
  signal: z.enum(['pause', 'resume', 'cancel', 'terminate']),
  reason: z.string().max(2000).optional(),
  confirmed: z.boolean().optional(),
});

/**
 * What an HTTP caller does to a process:
 * - `POST /api/processes/:pid/call {tool, args?, confirmed?}`: one tool call as the process, through the broker
 *   (authority applies); answers the broker's result envelope (200, also when the tool failed). A high-risk call
 *   (`process_exit`, `exec_process`, `signal_child_process` cancel/terminate) without `confirmed: true` is 409.
 * - `POST /api/processes/:pid/message {payload, channel?, kind?, interrupt?, from?}`: a human message (201).
 * - `POST /api/processes/:pid/signal {signal, reason?, confirmed?}`: pause/resume, or cancel/terminate (confirmed).
 */
export function processActionRoutes(ctx: ServerContext) {
  const { rt } = ctx;
  return new Hono()
    .post('/processes/:pid/call', jsonBody(CallBody), async (c) => {
      const pid = c.req.param('pid');
      const body = c.req.valid('json');
      const args = body.args ?? {};
      await rt.process(pid);
      const refused = await refuseUnconfirmed(c, rt, { via: 'http', pid, tool: body.tool, args, confirmed: body.confirmed === true });
      if (refused) return refused;
      return c.json(await rt.call(pid, body.tool, args));
    })
    .post('/processes/:pid/message', jsonBody(MessageBody), async (c) => {
      const pid = c.req.param('pid');
      const body = c.req.valid('json');
      await rt.process(pid);
      const m = await rt.sendMessage(pid, body.payload, {
        delivery: body.interrupt ? 'interrupt' : 'normal',
        ...(body.from ? { from: body.from } : {}),
        ...(body.channel ? { channel: body.channel } : {}),
        ...(body.kind ? { kind: body.kind } : {}),
      });
      return c.json(wire.messageToWire(m), 201);
    })
    .post('/processes/:pid/signal', jsonBody(SignalBody), async (c) => {
      const pid = c.req.param('pid');
      const body = c.req.valid('json');
      await rt.process(pid);
      const op = { via: 'http', pid, signal: body.signal, confirmed: body.confirmed === true } as const;
      const refused = await refuseUnconfirmed(c, rt, body.reason ? { ...op, reason: body.reason } : op);
      if (refused) return refused;
      return c.json(wire.processToWire(await rt.signal(pid, body.signal, body.reason)));
    });
}
