import { LibosError, RIGHTS, SERVICE_NAMES, defineTool, z, type ProcessService } from '@libos/sdk';
import { isTerminalProcessStatus } from '@libos/sdk';
import { CAPABILITY_SERVICE_NAME, type CapabilityService } from '../service.js';

/** Passes a narrowed copy of one of the caller's delegable grants to a live direct child. */
export const delegateCapability = defineTool({
  name: 'delegate_capability',
  description:
    'Give one of your live direct children a narrower copy of a delegable capability you hold: a resource ' +
    'within yours, a subset of its rights, no later expiry. Finite, non-delegable and deny/ask-restricted ' +
    'authority cannot be passed on. Revoking your grant revokes the copy.',
  input: z.object({
    child_pid: z.string().min(1).max(64),
    capability_id: z.string().min(1).max(64),
    resource: z.string().min(1).max(2048),
    rights: z.array(z.enum(RIGHTS)).min(1).max(16),
    expires_at: z.string().max(64).optional(),
    uses_remaining: z.number().int().min(1).max(1_000_000).optional(),
    delegable: z.boolean().default(false),
  }),
  output: z.object({
    capability_id: z.string(),
    child_pid: z.string(),
    resource: z.string(),
    rights: z.array(z.string()),
    expires_at: z.string().nullable(),
  }),
  async run(args, ctx) {
    const child = await ctx.service<ProcessService>(SERVICE_NAMES.processes).get(args.child_pid);
    if (child.parentPid !== ctx.pid || isTerminalProcessStatus(child.status)) {
      throw new LibosError('not_direct_child', `child_pid: ${args.child_pid} is not a live direct child of ${ctx.pid}`, {
        details: { field: 'child_pid' },
      });
    }
    const rec = await ctx.service<CapabilityService>(CAPABILITY_SERVICE_NAME).delegate(ctx.pid, args.capability_id, args.child_pid, {
      resource: args.resource,
      rights: args.rights,
      delegable: args.delegable,
      ...(args.expires_at !== undefined ? { expiresAt: args.expires_at } : {}),
      ...(args.uses_remaining !== undefined ? { usesRemaining: args.uses_remaining } : {}),
    });
    return { capability_id: rec.id, child_pid: rec.subject, resource: rec.resource, rights: [...rec.rights], expires_at: rec.expiresAt };
  },
});
