import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkPlugins } from '@libos/kernel';
import { isLibosError, parseSkill, skillFromFile, type Plugin, type SkillProblem } from '@libos/sdk';
import { standardPlugins } from '../compose.js';

/** Finds SKILL.md files: the folder itself, or any folder below it (skipping node_modules), at most 4 levels down. */
function findSkillFiles(dir: string, depth = 0): string[] {
  const here = join(dir, 'SKILL.md');
  if (existsSync(here)) return [here];
  if (depth >= 4) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'node_modules' && !d.name.startsWith('.'))
    .flatMap((d) => findSkillFiles(join(dir, d.name), depth + 1));
}

function isPlugin(v: unknown): v is Plugin {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Plugin).name === 'string' &&
    Array.isArray((v as Plugin).skills) &&
    Array.isArray((v as Plugin).tools)
  );
}

/** Imports a plugin package's entry, if it has a built one, and returns its plugin. */
async function importPlugin(dir: string): Promise<Plugin | null> {
  const pkgPath = join(dir, 'package.json');
  if (!existsSync(pkgPath)) return null;
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { main?: string; module?: string; exports?: unknown };
  const exp = pkg.exports as Record<string, unknown> | string | undefined;
  const dot = typeof exp === 'string' ? exp : (exp?.['.'] as Record<string, unknown> | string | undefined);
  const entry =
    typeof dot === 'string' ? dot : ((dot?.import as { default?: string } | string | undefined) ?? dot?.default ?? pkg.module ?? pkg.main);
  const file = typeof entry === 'string' ? entry : (entry as { default?: string } | undefined)?.default;
  if (!file || !existsSync(join(dir, file))) return null;
  const mod = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
  for (const v of Object.values(mod)) {
    const candidate = typeof v === 'function' && v.length === 0 ? (v as () => unknown)() : v;
    if (isPlugin(candidate)) return candidate;
  }
  return null;
}

export interface ValidationReport {
  readonly dir: string;
  readonly skills: readonly string[];
  readonly plugin: string | null;
  readonly problems: readonly SkillProblem[];
}

/**
 * Checks a third-party plugin folder: every SKILL.md parses and is valid; if the folder is a built package that
 * exports a plugin, the loader's checks run too, beside the kernel's own Skills and the standard plugins as a host
 * loads them (allowed-tools resolve, no duplicate or orphan tools, images name known Skills and tools).
 */
export async function validatePluginDir(dirArg: string): Promise<ValidationReport> {
  const dir = resolve(dirArg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    return { dir, skills: [], plugin: null, problems: [{ file: dir, field: 'path', message: 'is not a directory' }] };
  }
  const files = findSkillFiles(dir);
  const problems: SkillProblem[] = [];
  const skills: string[] = [];
  if (files.length === 0) problems.push({ file: dir, field: 'SKILL.md', message: 'no SKILL.md found in this folder or below it' });
  for (const f of files) {
    const r = parseSkill(skillFromFile(f));
    if (r.ok) skills.push(r.skill.name);
    else problems.push(...r.problems);
  }
  let pluginName: string | null = null;
  const plugin = await importPlugin(dir);
  if (plugin) {
    pluginName = plugin.name;
    try {
      // The plugin replaces a standard one of the same name (validating packages/session checks that package).
      checkPlugins([...standardPlugins().filter((p) => p.name !== plugin.name), plugin]);
    } catch (err) {
      if (!isLibosError(err)) throw err;
      const listed = (err.details?.problems as SkillProblem[] | undefined) ?? [{ file: dir, field: 'plugin', message: err.message }];
      for (const p of listed)
        if (!problems.some((q) => q.file === p.file && q.field === p.field && q.message === p.message)) problems.push(p);
    }
  }
  return { dir, skills, plugin: pluginName, problems };
}
