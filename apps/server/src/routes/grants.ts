import { Hono } from 'hono';
import { wire } from '@libos/kernel';
import { RIGHTS } from '@libos/sdk';
import { z } from 'zod';
import { refuseUnconfirmed } from '../internal/confirmation.js';
import { jsonBody } from '../internal/parse.js';
import type { ServerContext } from '../internal/server-context.js';

const GrantBody = z.strictObject({
  resource: z.string().min(1).max(1024),
  rights: z.array(z.enum(RIGHTS)).min(1).max(16),
  effect: z.enum(['allow', 'deny', 'ask']).optional(),
  uses: z.number().int().min(1).max(1_000_000).optional(),
  /** ISO 8601; without an offset it is UTC. */
  expires_at: z.string().min(1).max(64).optional(),
  delegable: z.boolean().optional(),
  confirmed: z.boolean().optional(),
});

/**
 * Grants as the trusted host (what `libos grant` and `libos revoke` do against a served store):
 * - `POST /api/processes/:pid/grants {resource, rights, effect?, uses?, expires_at?, delegable?, confirmed?}` issues
 *   a grant to the process (201, the capability record). A high-risk grant (an allow of grant, revoke, approve or
 *   admin, or on a wildcard or meta resource) without `confirmed: true` is 409 with the confirmation it needs.
 * - `POST /api/capabilities/:id/revoke` revokes one (`{revoked: id}`; 404 `capability_not_found`).
 * Both are audited like the CLI's (`capability.issue`, `capability.revoke`, actor `host`).
 *
 * @example
 * POST /api/processes/pid_0123456789abcdef/grants {"resource": "clock:now", "rights": ["read"]}
 */
export function grantRoutes(ctx: ServerContext) {
  const { rt } = ctx;
  return new Hono()
    .post('/processes/:pid/grants', jsonBody(GrantBody), async (c) => {
      const pid = c.req.param('pid');
      const body = c.req.valid('json');
      await rt.process(pid);
      const effect = body.effect ?? 'allow';
      const op = {
        via: 'http',
        pid,
        confirmed: body.confirmed === true,
        grant: { resource: body.resource, rights: body.rights, effect },
      } as const;
      const refused = await refuseUnconfirmed(c, rt, op);
      if (refused) return refused;
      const cap = await rt.grant(pid, body.resource, body.rights, {
        effect,
        ...(body.uses !== undefined ? { uses: body.uses } : {}),
        ...(body.expires_at !== undefined ? { expiresAt: body.expires_at } : {}),
        ...(body.delegable !== undefined ? { delegable: body.delegable } : {}),
      });
      return c.json(wire.capabilityToWire(cap), 201);
    })
    .post('/capabilities/:id/revoke', async (c) => {
      const id = c.req.param('id');
      await rt.revoke(id);
      return c.json({ revoked: id });
    });
}
