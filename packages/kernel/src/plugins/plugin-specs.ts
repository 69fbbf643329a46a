import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LibosError, type Plugin } from '@libos/sdk';

/** Where a plugin loaded from a spec came from: the spec as written and the file it was imported from. */
export interface PluginSource {
  readonly spec: string;
  readonly file: string;
}

const SOURCES = new WeakMap<Plugin, PluginSource>();

/** The spec and file a plugin was loaded from (`importPluginSpec`), or undefined for one given as an object. */
export function pluginSourceOf(plugin: Plugin): PluginSource | undefined {
  return SOURCES.get(plugin);
}

/** Records that `plugin` (e.g. the configured copy of a loaded one) came from `source`. */
export function setPluginSource(plugin: Plugin, source: PluginSource | undefined): void {
  if (source) SOURCES.set(plugin, source);
}

/** True for an object shaped like a Plugin (what the loader then validates in full). */
export function isPluginLike(v: unknown): v is Plugin {
  if (typeof v !== 'object' || v === null) return false;
  const p = v as Partial<Plugin>;
  return typeof p.name === 'string' && Array.isArray(p.skills) && Array.isArray(p.tools);
}

const isPathSpec = (spec: string) =>
  spec.startsWith('./') || spec.startsWith('../') || spec === '.' || spec === '..' || isAbsolute(spec) || spec.startsWith('file:');

/** `@scope/name/sub` → name `@scope/name`, subpath `./sub`; `name` → subpath `.`. */
function splitPackageSpec(spec: string): { name: string; subpath: string } | null {
  const m = /^((?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*)(\/.+)?$/i.exec(spec);
  return m ? { name: m[1]!, subpath: m[2] ? `.${m[2]}` : '.' } : null;
}

type ExportTarget = string | null | ExportTarget[] | { readonly [condition: string]: ExportTarget };

/** The file an `exports` target picks for an ESM import on Node (`import`, `node`, `default` conditions, in order). */
function pickTarget(t: ExportTarget | undefined): string | null {
  if (t === undefined || t === null) return null;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    for (const x of t) {
      const f = pickTarget(x);
      if (f) return f;
    }
    return null;
  }
  for (const [cond, v] of Object.entries(t))
    if (cond === 'import' || cond === 'node' || cond === 'default') {
      const f = pickTarget(v);
      if (f) return f;
    }
  return null;
}

/** The entry file of a package folder for `subpath` (`.` or `./x`): its `exports`, else `module`, `main`, index.js. */
function packageEntry(dir: string, subpath: string, spec: string): string {
  const pkgPath = join(dir, 'package.json');
  const pkg = existsSync(pkgPath)
    ? (JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports?: unknown; module?: string; main?: string })
    : {};
  let rel: string | null = null;
  if (pkg.exports !== undefined) {
    const exp = pkg.exports as ExportTarget;
    const map =
      typeof exp === 'object' && exp !== null && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'))
        ? exp
        : { '.': exp };
    rel = pickTarget((map as Record<string, ExportTarget>)[subpath]);
    if (!rel)
      throw new LibosError(
        'plugin_invalid',
        `plugin ${spec}: the package at ${dir} exports no ${subpath === '.' ? 'main entry' : subpath} for import`,
        { details: { spec, dir } },
      );
  } else if (subpath !== '.') {
    rel = subpath;
  } else {
    rel = pkg.module ?? pkg.main ?? 'index.js';
  }
  const file = resolve(dir, rel);
  if (!existsSync(file))
    throw new LibosError('plugin_invalid', `plugin ${spec}: its entry ${file} does not exist (is the package built?)`, {
      details: { spec, file },
    });
  return file;
}

/**
 * The file a plugin spec names, resolved from `baseDir`: a path (`./plugins/notes.js`, a package folder, absolute, or
 * a `file:` URL), or a package name (`@acme/libos-weather`, `pkg/sub`) found in `node_modules` of `baseDir` or a
 * folder above it, as Node would. An unresolvable spec is `not_found` naming it and where it was looked for.
 */
export function resolvePluginSpec(spec: string, baseDir: string): string {
  if (typeof spec !== 'string' || spec.trim() === '')
    throw new LibosError('invalid_arguments', 'plugin: a spec must be a non-empty string');
  if (isPathSpec(spec)) {
    const path = spec.startsWith('file:') ? fileURLToPath(spec) : resolve(baseDir, spec);
    if (!existsSync(path))
      throw new LibosError('not_found', `plugin ${spec}: no such file or folder (${path})`, { details: { spec, path } });
    return statSync(path).isDirectory() ? packageEntry(path, '.', spec) : path;
  }
  const parts = splitPackageSpec(spec);
  if (!parts)
    throw new LibosError(
      'invalid_arguments',
      `plugin ${JSON.stringify(spec)}: not a package name or a path (paths start with ./, ../ or /)`,
      { details: { spec } },
    );
  for (let dir = resolve(baseDir); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', parts.name);
    if (existsSync(join(candidate, 'package.json'))) return packageEntry(candidate, parts.subpath, spec);
    if (dirname(dir) === dir) break;
  }
  throw new LibosError(
    'not_found',
    `plugin ${spec}: no package of that name is installed in ${resolve(baseDir)} or a folder above it (npm install ${parts.name})`,
    {
      details: { spec, from: resolve(baseDir) },
    },
  );
}

/** The plugin a module exports: its default (a Plugin or a factory of one), else `plugin`, else its only Plugin export. */
async function pluginOfModule(mod: Record<string, unknown>, spec: string): Promise<Plugin> {
  const asPlugin = async (v: unknown): Promise<Plugin | null> => {
    if (isPluginLike(v)) return v;
    if (typeof v === 'function' && v.length === 0) {
      const made = await (v as () => unknown)();
      if (isPluginLike(made)) return made;
    }
    return null;
  };
  // A CommonJS module's exports arrive as `default` (and `module.exports.default` as default.default).
  const def = mod.default as Record<string, unknown> | undefined;
  for (const v of [
    def,
    mod.plugin,
    def && typeof def === 'object' ? def.default : undefined,
    def && typeof def === 'object' ? def.plugin : undefined,
  ]) {
    const p = await asPlugin(v);
    if (p) return p;
  }
  const found: Plugin[] = [];
  for (const [key, v] of Object.entries(mod))
    if (key !== 'default') {
      const p = await asPlugin(v);
      if (p && !found.some((f) => f.name === p.name)) found.push(p);
    }
  if (found.length === 1) return found[0]!;
  const why =
    found.length === 0
      ? 'exports no plugin (export default definePlugin({...}), or a function that returns one)'
      : `exports ${found.length} plugins (${found.map((f) => f.name).join(', ')}); export one as default`;
  throw new LibosError('plugin_invalid', `plugin ${spec}: ${why}`, { details: { spec } });
}

/**
 * Imports the plugin a spec names (see `resolvePluginSpec`), resolved from `baseDir`. The module's default export
 * is a Plugin or a function returning one (called with no arguments); else its `plugin` export, else its only
 * Plugin export. A module that fails to import, or exports no plugin, is `plugin_invalid` naming the spec.
 *
 * @example
 * const weather = await importPluginSpec('@acme/libos-weather', process.cwd());
 * const rt = await openRuntime({ path: ':memory:', plugins: [weather] });
 */
export async function importPluginSpec(spec: string, baseDir: string): Promise<Plugin> {
  const file = resolvePluginSpec(spec, baseDir);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new LibosError('plugin_invalid', `plugin ${spec}: importing ${file} failed: ${(err as Error)?.message ?? String(err)}`, {
      details: { spec, file },
      cause: err,
    });
  }
  const plugin = await pluginOfModule(mod, spec);
  setPluginSource(plugin, { spec, file });
  return plugin;
}

/** Imports several specs in order (`importPluginSpec`); the first failure is thrown. */
export async function importPluginSpecs(specs: readonly string[], baseDir: string): Promise<Plugin[]> {
  const out: Plugin[] = [];
  for (const spec of specs) out.push(await importPluginSpec(spec, baseDir));
  return out;
}
