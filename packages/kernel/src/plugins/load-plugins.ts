import { RESOURCE_KIND_PATTERN } from '@libos/capabilities';
import {
  defineErrorCodes,
  errorCodeProblem,
  LibosError,
  parseSkill,
  TOOL_NAME_PATTERN,
  TOOL_TABLE_POLICIES,
  type ImageDefinition,
  type OwnershipResolver,
  type Plugin,
  type ServiceFactory,
  type SkillProblem,
} from '@libos/sdk';
import type { MigrationSet } from '../store/migrate.js';
import type { RegisteredSkill, RegisteredTool, Registry } from './registry.js';
import { pluginShapeProblems } from './plugin-shape.js';
import { contextManagementProblems } from '../context/maintenance-settings.js';

export const IMAGE_ID_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*:[A-Za-z0-9._-]+$/;

/** An image whose tools may be grouped by owning Skill (`BuiltinImage` in @libos/sdk: the kernel's, or spread from one). */
type GroupedImage = ImageDefinition & { readonly toolGroups?: readonly { readonly skill: string; readonly tools: readonly string[] }[] };

/**
 * Validates plugins and builds the registry. Fails fast with every problem, each naming the file (or plugin) and
 * the field: a malformed SKILL.md, a name that differs from its folder, an `allowed-tools` entry with no definition,
 * a tool defined twice, a tool that no Skill owns (or that two Skills own), an image naming unknown Skills or tools, two
 * ownership resolvers for one resource kind, an error code that is a kernel code, lies outside the closed categories or
 * is declared by two plugins. An image's table is never narrowed silently: every tool it names must be
 * defined. Only a grouped image's tool group (a kernel image, or one spread from it) whose Skill is not loaded at all is
 * left out (with that Skill), since the host chose not to load its plugin; a loaded Skill that lacks a tool of its
 * group fails naming the image and tool.
 *
 * @example
 * import { BUILTIN_IMAGES } from '@libos/kernel';
 * const registry = loadPlugins([objectMemory(), session()], BUILTIN_IMAGES);
 */
export function loadPlugins(plugins: readonly Plugin[], builtins: readonly GroupedImage[]): Registry {
  // A value that is not shaped like a plugin (plain JS, no definePlugin) is reported before anything reads it.
  const malformed = plugins.flatMap((p, i) => pluginShapeProblems(p, i));
  if (malformed.length > 0) throw loadFailure(malformed);
  const problems: SkillProblem[] = [];
  const bad = (file: string, field: string, message: string) => problems.push({ file, field, message });

  const pluginNames = new Set<string>();
  for (const p of plugins) {
    if (pluginNames.has(p.name)) bad(`plugin ${p.name}`, 'name', 'is loaded twice');
    if (typeof p.version !== 'string' || p.version.trim() === '') bad(`plugin ${p.name}`, 'version', 'must be a non-empty string');
    pluginNames.add(p.name);
  }

  // Tools, by name, across every plugin.
  const defs = new Map<string, { plugin: string; tool: Plugin['tools'][number] }>();
  for (const p of plugins)
    p.tools.forEach((tool, i) => {
      const where = `plugin ${p.name}`;
      if (!TOOL_NAME_PATTERN.test(tool.name))
        bad(where, `tools[${i}].name`, `${JSON.stringify(tool.name)} must match ${TOOL_NAME_PATTERN}`);
      const prev = defs.get(tool.name);
      if (prev) bad(where, `tools[${i}].name`, `tool ${JSON.stringify(tool.name)} is already defined by plugin ${prev.plugin}`);
      else defs.set(tool.name, { plugin: p.name, tool });
    });

  // Skills: parse every SKILL.md, then check names and allowed-tools.
  const skills = new Map<string, RegisteredSkill>();
  const owner = new Map<string, string>();
  for (const p of plugins)
    for (const source of p.skills) {
      const r = parseSkill(source);
      if (!r.ok) {
        problems.push(...r.problems);
        continue;
      }
      const s = r.skill;
      const dup = skills.get(s.name);
      if (dup) {
        bad(source.path, 'name', `skill ${JSON.stringify(s.name)} is already defined in ${dup.manifest.path}`);
        continue;
      }
      skills.set(s.name, { manifest: s, plugin: p.name });
      for (const t of s.allowedTools) {
        if (!defs.has(t)) bad(source.path, 'allowed-tools', `${JSON.stringify(t)} has no tool definition in any loaded plugin`);
        const o = owner.get(t);
        if (o && o !== s.name)
          bad(source.path, 'allowed-tools', `${JSON.stringify(t)} is already owned by skill ${o}; a tool belongs to exactly one Skill`);
        else owner.set(t, s.name);
      }
    }
  for (const [name, d] of defs)
    if (!owner.has(name)) bad(`plugin ${d.plugin}`, 'tools', `tool ${JSON.stringify(name)} is not named by any Skill's allowed-tools`);

  // Services and migrations.
  const services = new Map<string, ServiceFactory>();
  const migrations: MigrationSet[] = [];
  for (const p of plugins) {
    for (const [name, factory] of Object.entries(p.services ?? {})) {
      if (services.has(name)) bad(`plugin ${p.name}`, `services.${name}`, 'is already provided by another plugin');
      services.set(name, factory);
    }
    if (p.migrations?.length) migrations.push({ owner: p.name, migrations: p.migrations });
  }

  // Ownership resolvers: one per resource kind.
  const owners = new Map<string, { plugin: string; resolver: OwnershipResolver }>();
  for (const p of plugins)
    (p.owners ?? []).forEach((resolver, i) => {
      const where = `plugin ${p.name}`;
      const field = `owners[${i}].kind`;
      const kind = JSON.stringify(resolver.kind);
      if (typeof resolver.kind !== 'string' || !RESOURCE_KIND_PATTERN.test(resolver.kind))
        bad(where, field, `${kind} must match ${RESOURCE_KIND_PATTERN}`);
      else if (owners.has(resolver.kind))
        bad(where, field, `resource kind ${kind} already has owners from plugin ${owners.get(resolver.kind)!.plugin}`);
      else owners.set(resolver.kind, { plugin: p.name, resolver });
    });

  // Error codes: each under a closed category, not a kernel code, declared by one loaded plugin only.
  const codes = new Map<string, string>();
  for (const p of plugins)
    for (const [code, category] of Object.entries(p.errorCodes ?? {})) {
      const problem = errorCodeProblem(code, category);
      if (problem) bad(`plugin ${p.name}`, `errorCodes.${code}`, problem);
      else if (codes.has(code)) bad(`plugin ${p.name}`, `errorCodes.${code}`, `is already declared by plugin ${codes.get(code)}`);
      else codes.set(code, p.name);
    }

  // Images: every tool named must be defined. A tool group is left out only with its unloaded Skill.
  const images = new Map<string, ImageDefinition>();
  const addImage = (img: GroupedImage, where: string) => {
    if (!IMAGE_ID_PATTERN.test(img.id)) bad(where, 'images.id', `${JSON.stringify(img.id)} must be name:version (${IMAGE_ID_PATTERN})`);
    if (images.has(img.id)) bad(where, 'images.id', `image ${img.id} is registered twice`);
    const field = `images[${img.id}].defaultTools`;
    if (img.toolTablePolicy !== undefined && !TOOL_TABLE_POLICIES.includes(img.toolTablePolicy)) {
      bad(
        where,
        `images[${img.id}].toolTablePolicy`,
        `${JSON.stringify(img.toolTablePolicy)} must be one of ${TOOL_TABLE_POLICIES.join(', ')}`,
      );
    }
    for (const m of contextManagementProblems(img)) bad(where, `images[${img.id}].contextManagement`, m);
    let def: ImageDefinition = img;
    if (img.toolGroups) {
      const loaded = img.toolGroups.filter((g) => skills.has(g.skill));
      for (const g of loaded)
        for (const t of g.tools) {
          if (!defs.has(t)) bad(where, field, `unknown tool ${JSON.stringify(t)}: skill ${g.skill} is loaded but no plugin defines it`);
          else if (owner.get(t) !== g.skill) {
            bad(where, field, `tool ${JSON.stringify(t)} belongs to skill ${owner.get(t)}, not ${g.skill}`);
          }
        }
      // Tools the image lists outside its groups (an image spread from a kernel one, plus its own) stay, checked.
      const grouped = new Set(img.toolGroups.flatMap((g) => g.tools));
      const own = img.defaultTools.filter((t) => !grouped.has(t));
      for (const t of own) if (!defs.has(t)) bad(where, field, `unknown tool ${JSON.stringify(t)}`);
      const unloaded = new Set(img.toolGroups.filter((g) => !skills.has(g.skill)).map((g) => g.skill));
      const { toolGroups: _groups, ...plain } = img;
      def = {
        ...plain,
        defaultSkills: img.defaultSkills.filter((s) => !unloaded.has(s)),
        defaultTools: [...loaded.flatMap((g) => g.tools), ...own],
      };
    } else {
      for (const t of img.defaultTools) if (!defs.has(t)) bad(where, field, `unknown tool ${JSON.stringify(t)}`);
    }
    for (const s of def.defaultSkills) {
      if (!skills.has(s)) bad(where, `images[${img.id}].defaultSkills`, `unknown skill ${JSON.stringify(s)}`);
    }
    images.set(img.id, Object.freeze(def));
  };
  for (const img of builtins) addImage(img, 'kernel');
  for (const p of plugins) for (const img of p.images ?? []) addImage(img, `plugin ${p.name}`);

  if (problems.length > 0) throw loadFailure(problems);
  for (const p of plugins) if (p.errorCodes) defineErrorCodes(p.name, p.errorCodes);
  const tools = new Map<string, RegisteredTool>();
  for (const [name, d] of defs) tools.set(name, { tool: d.tool, plugin: d.plugin, skill: owner.get(name)! });
  return { plugins, tools, skills, images, services, migrations, owners: new Map([...owners].map(([kind, o]) => [kind, o.resolver])) };
}

/** `plugin_invalid` listing every problem, one `file: field: message` line each. */
function loadFailure(problems: readonly SkillProblem[]): LibosError {
  const text = problems.map((x) => `${x.file}: ${x.field}: ${x.message}`).join('\n');
  return new LibosError('plugin_invalid', `plugins failed to load:\n${text}`, { details: { problems } });
}
