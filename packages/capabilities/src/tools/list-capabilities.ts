import { defineTool, z } from '@libos/sdk';
import { CAPABILITY_SERVICE_NAME, type CapabilityService } from '../service.js';

/** Lists the calling process's own grants (ids, resources, rights, effect, uses, expiry); grants nothing. */
export const listCapabilities = defineTool({
  name: 'list_capabilities',
  description:
    'List the capabilities your process holds: id, resource, rights, effect (allow/deny/ask), remaining uses ' +
    'and expiry. Seeing a grant here is not using it; revoked, expired and exhausted grants are hidden unless ' +
    'include_inactive is true.',
  input: z.object({
    include_inactive: z.boolean().default(false),
    kind: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/)
      .max(64)
      .optional()
      .describe('only resources of this kind, e.g. "object"'),
  }),
  output: z.object({
    capabilities: z.array(
      z.object({
        id: z.string(),
        resource: z.string(),
        rights: z.array(z.string()),
        effect: z.enum(['allow', 'deny', 'ask']),
        uses_remaining: z.number().nullable(),
        expires_at: z.string().nullable(),
        delegable: z.boolean(),
        status: z.string(),
      }),
    ),
  }),
  async run({ include_inactive, kind }, ctx) {
    const caps = await ctx.service<CapabilityService>(CAPABILITY_SERVICE_NAME).list(ctx.pid, { includeInactive: include_inactive });
    return {
      capabilities: caps
        .filter((c) => kind === undefined || c.resource.startsWith(`${kind}:`))
        .map((c) => ({
          id: c.id,
          resource: c.resource,
          rights: [...c.rights],
          effect: c.effect,
          uses_remaining: c.usesRemaining,
          expires_at: c.expiresAt,
          delegable: c.delegable,
          status: c.status,
        })),
    };
  },
});
