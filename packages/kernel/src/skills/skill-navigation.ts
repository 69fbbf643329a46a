import {
  definePlugin,
  defineTool,
  LibosError,
  skillFromFile,
  toolTablePolicyOf,
  z,
  type ImageDefinition,
  type Plugin,
  type ToolContext,
} from '@libos/sdk';
import { SKILL_NAVIGATION } from '../images/builtin-images.js';
import { NAVIGATION_SKILL_URL } from '../skill-files.js';
import { getProcess, updateLoadedSkills } from '../processes/process-store.js';
import { visibleTools, type LoadedSkill, type ProcessInfo } from '../processes/process-record.js';
import type { Registry } from '../plugins/registry.js';
import { resources } from '@libos/sdk';
import type { KernelStore } from '../store/kernel-database.js';
import { storeOf } from '../store/kernel-scope.js';
import { VERSION } from '../version.js';

const db = (ctx: ToolContext) => storeOf(ctx);

/**
 * The callable table after loading `tools` (a Skill's) on a process whose table is `table`: the tools appended, unless
 * the image's table is `exact` (or the image is not registered), when it stays as it is.
 */
export function tableWithSkill(table: readonly string[], image: ImageDefinition | undefined, tools: readonly string[]): string[] {
  if (!image || toolTablePolicyOf(image) === 'exact') return [...table];
  const have = new Set(table);
  return [...table, ...tools.filter((t) => !have.has(t))];
}

/**
 * The callable table after unloading a Skill whose tools are `tools`: what loading it added goes (the image's own
 * `defaultTools` stay); an `exact` table stays as it is.
 */
export function tableWithoutSkill(table: readonly string[], image: ImageDefinition | undefined, tools: readonly string[]): string[] {
  if (!image || toolTablePolicyOf(image) === 'exact') return [...table];
  const drop = new Set(tools.filter((t) => !image.defaultTools.includes(t)));
  return table.filter((t) => !drop.has(t));
}

/**
 * Loads a Skill onto a process (no authority check: callers check): its tools join the callable table unless the
 * image's table is `exact`. Returns the Skill's tools the process can now call (`toolNames`) and those newly visible.
 */
export async function loadSkillOnProcess(
  store: KernelStore,
  registry: Registry,
  pid: string,
  skillId: string,
  nowIso: string,
  expectedSha?: string,
) {
  const reg = registry.skills.get(skillId);
  if (!reg)
    throw new LibosError('skill_not_found', `skill_id: no skill named ${JSON.stringify(skillId)}; discover_skills lists the catalog`, {
      details: { skill_id: skillId },
    });
  if (expectedSha !== undefined && expectedSha !== reg.manifest.packageSha256) {
    throw new LibosError(
      'skill_package_changed',
      `expected_package_sha256: skill ${skillId} is now ${reg.manifest.packageSha256}, not ${expectedSha}; ` +
        `discover it again before activating`,
      {
        details: { skill_id: skillId, expected: expectedSha, actual: reg.manifest.packageSha256 },
      },
    );
  }
  const p = await getProcess(store, pid);
  const before = new Set(p.visibleTools);
  let table = p.toolTable;
  const already = loadedSkill(p, skillId) !== undefined;
  if (!already) {
    const loaded: Record<string, LoadedSkill> = {
      ...p.loadedSkills,
      [skillId]: { packageSha256: reg.manifest.packageSha256, tools: [...reg.manifest.allowedTools] },
    };
    table = tableWithSkill(p.toolTable, registry.images.get(p.imageId), reg.manifest.allowedTools);
    await updateLoadedSkills(store, p, loaded, nowIso, table.length === p.toolTable.length ? undefined : table);
  }
  const toolNames = reg.manifest.allowedTools.filter((t) => table.includes(t));
  return { manifest: reg.manifest, toolNames, newlyVisible: toolNames.filter((t) => !before.has(t)), alreadyActive: already };
}

/** The Skill `id` loaded on `p`, looked up as an own key only (a skill_id such as "hasOwnProperty" is no Skill). */
function loadedSkill(p: ProcessInfo, id: string): LoadedSkill | undefined {
  return Object.hasOwn(p.loadedSkills, id) ? p.loadedSkills[id] : undefined;
}

/**
 * The kernel's own Skill plugin: discover, activate and unload Skills. They change one process's visible tool
 * table and prompt text; they grant nothing.
 */
export function skillNavigationPlugin(registry: () => Registry): Plugin {
  const discover = defineTool({
    name: 'discover_skills',
    description:
      'Search the Skill catalog by words in a Skill id or description. Returns metadata only; activate a Skill to see its tools.',
    input: z.object({
      text: z.string().max(500).optional().describe('words to rank by; omit to list all'),
      limit: z.number().int().min(1).max(50).default(10).describe('page size, 1..50 (default 10)'),
    }),
    async run({ text, limit }, ctx) {
      await ctx.authority.require('skill:*', 'read');
      const p = await getProcess(db(ctx), ctx.pid);
      const words = (text ?? '').toLowerCase().split(/\s+/).filter(Boolean);
      const scored = [...registry().skills.values()]
        .map((s) => {
          const hay = `${s.manifest.name} ${s.manifest.description}`.toLowerCase();
          return { s, score: words.reduce((n, w) => n + (hay.includes(w) ? 1 : 0), 0) };
        })
        .filter((x) => words.length === 0 || x.score > 0)
        .sort((a, b) => b.score - a.score || a.s.manifest.name.localeCompare(b.s.manifest.name));
      const page = scored.slice(0, limit).map(({ s }) => ({
        skill_id: s.manifest.name,
        description: s.manifest.description,
        tools: [...s.manifest.allowedTools],
        package_sha256: s.manifest.packageSha256,
        active: loadedSkill(p, s.manifest.name) !== undefined,
      }));
      const next_step = page.length === 0 ? 'refine_search' : page.every((x) => x.active) ? 'use_loaded_skill' : 'activate_skill';
      return { skills: page, has_more: scored.length > page.length, next_step };
    },
  });

  const activate = defineTool({
    name: 'activate_skill',
    description: 'Load one Skill onto this process: its instructions and tool schemas appear next turn. Grants no authority.',
    input: z.object({
      skill_id: z.string().min(1).max(64),
      expected_package_sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
    }),
    async run({ skill_id, expected_package_sha256 }, ctx) {
      await ctx.authority.require(resources.skill(skill_id), 'execute');
      const r = await loadSkillOnProcess(db(ctx), registry(), ctx.pid, skill_id, ctx.clock.now().toISOString(), expected_package_sha256);
      if (!r.alreadyActive) {
        await ctx.events.emit('skill_loaded', { pid: ctx.pid, skill_id, package_sha256: r.manifest.packageSha256 });
        await ctx.audit.record({
          action: 'skill.activate',
          target: resources.skill(skill_id),
          details: { package_sha256: r.manifest.packageSha256, tools: r.toolNames },
        });
      }
      return {
        pid: ctx.pid,
        skill_id,
        name: r.manifest.name,
        tool_names: r.toolNames,
        package_sha256: r.manifest.packageSha256,
        already_active: r.alreadyActive,
      };
    },
  });

  const unload = defineTool({
    name: 'unload_skill',
    description: 'Remove a loaded Skill: its instructions and the tools only it made visible. Revokes nothing.',
    input: z.object({ skill_id: z.string().min(1).max(64) }),
    async run({ skill_id }, ctx) {
      await ctx.authority.require(resources.skill(skill_id), 'execute');
      if (skill_id === SKILL_NAVIGATION)
        throw new LibosError('invalid_state', `skill_id: ${SKILL_NAVIGATION} cannot be unloaded (it is how a process finds Skills)`);
      const p = await getProcess(db(ctx), ctx.pid);
      const skill = loadedSkill(p, skill_id);
      if (!skill) throw new LibosError('invalid_state', `skill_id: ${skill_id} is not loaded on ${ctx.pid}`, { details: { skill_id } });
      const loaded = { ...p.loadedSkills };
      delete loaded[skill_id];
      const table = tableWithoutSkill(p.toolTable, registry().images.get(p.imageId), skill.tools);
      await updateLoadedSkills(db(ctx), p, loaded, ctx.clock.now().toISOString(), table.length === p.toolTable.length ? undefined : table);
      const after = new Set(visibleTools(table, loaded));
      const removed_tools = p.visibleTools.filter((t) => !after.has(t));
      await ctx.events.emit('skill_unloaded', { pid: ctx.pid, skill_id });
      await ctx.audit.record({ action: 'skill.unload', target: resources.skill(skill_id), details: { removed_tools } });
      return { pid: ctx.pid, skill_id, removed_tools };
    },
  });

  return definePlugin({
    name: '@libos/kernel:skill-navigation',
    version: VERSION,
    skills: [skillFromFile(NAVIGATION_SKILL_URL)],
    tools: [discover, activate, unload],
  });
}
