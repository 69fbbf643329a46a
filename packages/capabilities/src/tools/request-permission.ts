import { LibosError, RIGHTS, SERVICE_NAMES, defineTool, z, type HumanService } from '@libos/sdk';
import { CAPABILITY_SERVICE_NAME, type CapabilityService } from '../service.js';
import { resources } from '@libos/sdk';

/**
 * Asks a human for a standing permission for the caller itself and waits for the answer. Gates run before any
 * prompt: canonical input, model limits, the manifest ceiling, and `human:<human>` write (spent when queued).
 * On resume the answer is installed as one record (idempotent per request); the model sees only
 * `{request_id, resource, rights, status}`.
 */
export const requestPermission = defineTool({
  name: 'request_permission',
  description:
    'Ask a human to grant your own process a standing permission (resource and rights) and wait for the decision. ' +
    'Broad or privileged requests (admin on capabilities, whole-kind wildcards, non-git shell, filesystem ' +
    'writes outside the workspace, workspace-wide delete) are refused without asking. A rejection returns ' +
    'status rejected; do not ask again for the same thing.',
  input: z.object({
    resource: z.string().min(1).max(2048),
    rights: z.array(z.enum(RIGHTS)).min(1).max(16),
    reason: z.string().min(1).max(2000),
    human: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/)
      .max(64)
      .default('owner'),
  }),
  output: z.object({
    request_id: z.string(),
    resource: z.string(),
    rights: z.array(z.string()),
    status: z.enum(['approved', 'rejected', 'cancelled']),
  }),
  async run({ resource, rights, reason, human }, ctx) {
    const caps = ctx.service<CapabilityService>(CAPABILITY_SERVICE_NAME);
    const humans = ctx.service<HumanService>(SERVICE_NAMES.human);
    if (ctx.resumed) {
      const mine = await caps.latestPermissionRequest(ctx.pid);
      const r = mine ? await humans.get(mine.requestId) : null;
      if (!mine || !r) throw new LibosError('human_request_not_found', `the permission request of ${ctx.pid} is gone`);
      if (r.status === 'pending') return ctx.wait({ kind: 'human', request_ids: [r.id] });
      if (r.status !== 'cancelled') {
        const response = r.response ?? {};
        await caps.applyPermissionDecision(
          { requestId: r.id, pid: ctx.pid, resource: mine.resource, rights: mine.rights },
          {
            approved: r.status === 'approved',
            ...(typeof response.decision === 'string' ? { decision: response.decision } : {}),
            responder: typeof response.responder === 'string' ? response.responder : resources.human(mine.human),
          },
        );
      }
      return {
        request_id: r.id,
        resource: mine.resource,
        rights: [...mine.rights],
        status: r.status as 'approved' | 'rejected' | 'cancelled',
      };
    }
    const req = await caps.checkPermissionRequest(ctx.pid, resource, rights);
    await ctx.authority.require(resources.human(human), 'write');
    const r = await humans.create(ctx.pid, {
      kind: 'permission',
      prompt: reason,
      details: { human, resource: req.resource, rights: req.rights },
    });
    await caps.recordPermissionRequest(ctx.pid, r.id, req.resource, req.rights, human);
    await ctx.events.emit('human_request_created', { pid: ctx.pid, request_id: r.id, kind: 'permission' });
    return ctx.wait({ kind: 'human', request_ids: [r.id] });
  },
});
