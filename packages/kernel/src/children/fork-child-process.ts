import { defineTool, LibosError, SERVICE_NAMES, z, type ObjectsService, type ToolContext } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { getProcess, updateLoadedSkills } from '../processes/process-store.js';
import { spawnInScope } from '../processes/spawn.js';
import { resources } from '@libos/sdk';
import { idPattern } from '@libos/sdk';
import { kernelScope } from '../store/kernel-scope.js';

const scopeOf = (ctx: ToolContext) => kernelScope(ctx);

/**
 * `fork_child_process`: a worker child of the same image that sees (read-only) the roots of your MemoryView you
 * name, or all of them. It keeps your Skills, gets its own goal, budget and namespace, and no other grant.
 */
export function forkChildProcess(deps: () => KernelDeps) {
  return defineTool({
    name: 'fork_child_process',
    description:
      'Fork a worker child of your own image that sees the named roots of your MemoryView (default all) read-only ' +
      'and keeps your Skills. Grants nothing else.',
    input: z.object({
      goal: z.string().min(1).max(32_000).optional().describe("the worker's goal; default your own goal"),
      root_oids: z
        .array(z.string().regex(idPattern('obj')))
        .max(64)
        .optional()
        .describe('roots of your view to share; default all'),
      mode: z.enum(['worker']).default('worker').describe('worker: read-only view of the shared roots'),
    }),
    async run({ goal, root_oids, mode }, ctx) {
      await ctx.authority.require('process:spawn', 'write');
      const d = deps();
      if (!d.registry.services.has(SERVICE_NAMES.objects))
        throw new LibosError(
          'invalid_state',
          'fork_child_process shares MemoryView roots and needs the Object Memory plugin, which this runtime does not load',
        );
      const objects = ctx.service<ObjectsService>(SERVICE_NAMES.objects);
      const parent = await getProcess(scopeOf(ctx).store, ctx.pid);
      const mine = (await objects.viewRoots(ctx.pid)).map((r) => r.oid);
      const shared = root_oids ?? mine;
      const foreign = shared.filter((o) => !mine.includes(o));
      if (foreign.length)
        throw new LibosError(
          'invalid_arguments',
          `root_oids: ${foreign.join(', ')} ${foreign.length === 1 ? 'is' : 'are'} not roots of your MemoryView`,
          { details: { root_oids: foreign } },
        );
      // A fork shares only what the parent may read itself: visibility is never authority.
      for (const oid of shared) await ctx.authority.require(resources.object(oid), 'read', { consume: false });
      const child = await spawnInScope(d, scopeOf(ctx), {
        goal: goal ?? parent.goal,
        image: parent.imageId,
        parentPid: ctx.pid,
        // The fork's goal and shared roots derive from all the parent observed: its high-water carries over.
        labels: await ctx.flow.labels(),
        beforeRunnable: async (pid) => {
          const childAuthority = ctx.authorityFor(pid);
          const namespaces = new Set<string>();
          for (const oid of shared) {
            await childAuthority.grantTrusted({
              subject: pid,
              resource: resources.object(oid),
              rights: ['read', 'materialize'],
              metadata: { granted_by: 'fork_child_process', parent: ctx.pid },
            });
            await objects.attachRoot(pid, oid);
            const described = await objects.describe(oid);
            if (described) namespaces.add(described.namespace);
          }
          // Lookup by name needs namespace read; listing it still shows only the Objects the fork may read.
          for (const ns of namespaces)
            await childAuthority.grantTrusted({
              subject: pid,
              resource: resources.namespace(ns),
              rights: ['read'],
              metadata: { granted_by: 'fork_child_process', parent: ctx.pid },
            });
          const fresh = await getProcess(scopeOf(ctx).store, pid);
          // Same image, same Skills: the fork's callable table is the parent's (what activation added included).
          const table = [...new Set([...fresh.toolTable, ...parent.toolTable])];
          await updateLoadedSkills(
            scopeOf(ctx).store,
            fresh,
            { ...fresh.loadedSkills, ...parent.loadedSkills },
            ctx.clock.now().toISOString(),
            table,
          );
        },
      });
      await ctx.audit.record({
        action: 'process.fork',
        target: resources.process(child.pid),
        decision: mode,
        details: { parent: ctx.pid, root_oids: shared },
      });
      return { pid: child.pid, parent_pid: ctx.pid, image: child.imageId, mode, root_oids: shared, status: child.status };
    },
  });
}
