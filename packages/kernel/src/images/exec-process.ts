import {
  definePlugin,
  defineTool,
  LibosError,
  SERVICE_NAMES,
  skillFromFile,
  z,
  type ObjectsService,
  type Plugin,
  type ToolContext,
} from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { LoadedSkill } from '../processes/process-record.js';
import { getProcess } from '../processes/process-store.js';
import { AGENT_IMAGES_SKILL_URL } from '../skill-files.js';
import { tableWithSkill } from '../skills/skill-navigation.js';
import { resources } from '@libos/sdk';
import { VERSION } from '../version.js';
import { kernelScope } from '../store/kernel-scope.js';

const scopeOf = (ctx: ToolContext) => kernelScope(ctx);

/**
 * `exec_process`: the same pid, budget and usage boot a new image: its tool table, prompt and default Skills
 * replace the old ones in one transaction. Authority only narrows: with `preserve_capabilities: false` every
 * grant issued to the pid by someone else is revoked; image requirements are never granted.
 */
export function execProcessTool(deps: () => KernelDeps) {
  return defineTool({
    name: 'exec_process',
    description:
      'Replace the image this process runs, keeping pid, budget and usage. Call it alone; never while waiting. ' +
      'preserve_capabilities=false (default) drops grants issued to you by others.',
    input: z.object({
      image: z.string().min(1),
      goal: z.string().min(1).max(32_000).optional().describe('new goal; omitted keeps the current one'),
      preserve_memory: z.literal(true).default(true).describe('your MemoryView and Objects stay (the only supported value)'),
      preserve_capabilities: z.boolean().default(false),
    }),
    exclusive: true,
    async run({ image, goal, preserve_capabilities }, ctx) {
      const d = deps();
      const target = d.registry.images.get(image);
      const db = scopeOf(ctx).store;
      const before = await getProcess(db, ctx.pid);
      if (image !== before.imageId) await ctx.authority.require(resources.image(image), 'read');
      if (!target) throw new LibosError('image_not_found', `image: ${JSON.stringify(image)} is not registered`, { details: { image } });
      const loaded: Record<string, LoadedSkill> = {};
      let table: string[] = [...target.defaultTools];
      for (const s of target.defaultSkills) {
        const reg = d.registry.skills.get(s)!;
        loaded[s] = { packageSha256: reg.manifest.packageSha256, tools: [...reg.manifest.allowedTools] };
        table = tableWithSkill(table, target, reg.manifest.allowedTools);
      }
      let goalOid = before.goalOid;
      if (goal !== undefined && d.registry.services.has(SERVICE_NAMES.objects)) {
        // The new goal is the process's own text: it carries everything the process has observed.
        const labels = await ctx.flow.labels();
        const objects = ctx.service<ObjectsService>(SERVICE_NAMES.objects);
        goalOid = (await objects.createForProcess(ctx.pid, { type: 'goal', payload: goal, immutable: true, labels })).oid;
      }
      const revoked: string[] = [];
      if (!preserve_capabilities) {
        for (const cap of await d.engine.list(scopeOf(ctx), ctx.pid)) {
          if (cap.issuer === ctx.pid) continue; // handles on its own memory and objects
          await d.engine.revokeTrusted(scopeOf(ctx), cap.id, `exec_process into ${image} without preserve_capabilities`);
          revoked.push(cap.id);
        }
      }
      const r = await db
        .updateTable('processes')
        .set({
          image_id: image,
          tool_table: JSON.stringify(table),
          loaded_skills: JSON.stringify(loaded),
          goal: goal ?? before.goal,
          goal_oid: goalOid,
          state_generation: before.stateGeneration + 1,
          revision: before.revision + 1,
          updated_at: ctx.clock.now().toISOString(),
        })
        .where('pid', '=', ctx.pid)
        .where('revision', '=', before.revision)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) throw new LibosError('conflict', `process ${ctx.pid} changed concurrently; exec was not applied`);
      await ctx.events.emit('process_exec', { pid: ctx.pid, from_image: before.imageId, to_image: image });
      await ctx.audit.record({
        action: 'process.exec',
        target: resources.process(ctx.pid),
        decision: 'ok',
        details: { from_image: before.imageId, to_image: image, revoked, goal_changed: goal !== undefined },
      });
      return {
        pid: ctx.pid,
        image,
        previous_image: before.imageId,
        tool_table: table,
        skills: Object.keys(loaded),
        revoked_capabilities: revoked,
        goal_oid: goalOid,
      };
    },
  });
}

/** The kernel's agent-images Skill: `exec_process`. */
export function agentImagesPlugin(deps: () => KernelDeps): Plugin {
  return definePlugin({
    name: '@libos/kernel:agent-images',
    version: VERSION,
    skills: [skillFromFile(AGENT_IMAGES_SKILL_URL)],
    tools: [execProcessTool(deps)],
  });
}
