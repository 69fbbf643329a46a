import { defineTool, z } from '@libos/sdk';
import { CAPABILITY_SERVICE_NAME, type CapabilityService } from '../service.js';

/** Revokes a grant the caller issued, relinquishes one of its own allows, or uses a covering revoke/admin right. */
export const revokeCapability = defineTool({
  name: 'revoke_capability',
  description:
    'Revoke a capability you issued or delegated (everything derived from it stops working too), or give ' +
    'up one of your own allow grants. You cannot drop your own deny or ask records, and non-revocable grants ' +
    'stay. Completed effects are not undone.',
  input: z.object({ capability_id: z.string().min(1).max(64) }),
  output: z.object({ capability_id: z.string(), revoked: z.literal(true) }),
  async run({ capability_id }, ctx) {
    await ctx.service<CapabilityService>(CAPABILITY_SERVICE_NAME).revoke(ctx.pid, capability_id);
    return { capability_id, revoked: true as const };
  },
});
