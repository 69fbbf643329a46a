import { LibosError, type Migration } from '@libos/sdk';
import { PROCESS_STATUSES, TERMINAL_PROCESS_STATUSES, type LoadedSkill, type ProcessStatus } from '../processes/process-record.js';
import type { KernelStore } from '../store/kernel-database.js';
import { migrationStore } from '../store/kernel-scope.js';
import type { Registry } from './registry.js';

/** The migration set's owner name (its own set, so the kernel's core schema is untouched). */
export const STORE_PLUGINS_MIGRATIONS_OWNER = '@libos/kernel:plugins';

/**
 * The plugins a store was opened with (table `libos_plugins`): name, last version, and the Skills, tools and images
 * each contributed, so a later open without one of them can name the missing plugin instead of failing a process.
 */
export const storePluginsMigrations: readonly Migration[] = [
  {
    name: '0001_libos_plugins',
    async up(raw, kit) {
      const db = migrationStore(raw);
      const t = kit.types;
      await db.schema
        .createTable('libos_plugins')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('skills', t.json, (c) => c.notNull())
        .addColumn('tools', t.json, (c) => c.notNull())
        .addColumn('images', t.json, (c) => c.notNull())
        .addColumn('first_loaded_at', t.timestamp, (c) => c.notNull())
        .addColumn('last_loaded_at', t.timestamp, (c) => c.notNull())
        .execute();
    },
  },
];

/** A plugin as the store recorded it. */
export interface RecordedPlugin {
  readonly name: string;
  readonly version: string;
  readonly skills: readonly string[];
  readonly tools: readonly string[];
  readonly images: readonly string[];
}

/** What one live process needs that this runtime did not load. */
export interface ProcessNeeds {
  readonly pid: string;
  readonly status: ProcessStatus;
  readonly image: string | null;
  readonly skills: readonly string[];
  readonly tools: readonly string[];
}

/** The plugins recorded in a store, by name. */
export async function recordedPlugins(db: KernelStore): Promise<RecordedPlugin[]> {
  const rows = await db.selectFrom('libos_plugins').selectAll().orderBy('name').execute();
  return rows.map((r) => ({
    name: r.name,
    version: r.version,
    skills: JSON.parse(r.skills),
    tools: JSON.parse(r.tools),
    images: JSON.parse(r.images),
  }));
}

/** Every live (non-terminal) process's image, loaded Skills and tool-table entries that `registry` lacks. */
async function unmetNeeds(db: KernelStore, registry: Registry): Promise<ProcessNeeds[]> {
  // Through the status index: a store's ended processes (most of its history) are never read here.
  const live = PROCESS_STATUSES.filter((st) => !TERMINAL_PROCESS_STATUSES.has(st));
  const rows = await db
    .selectFrom('processes')
    .select(['pid', 'status', 'image_id', 'tool_table', 'loaded_skills', 'created_at'])
    .where('status', 'in', live)
    .execute();
  rows.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.pid.localeCompare(b.pid));
  const out: ProcessNeeds[] = [];
  for (const r of rows) {
    const image = registry.images.has(r.image_id) ? null : r.image_id;
    const skills = Object.keys(JSON.parse(r.loaded_skills) as Record<string, LoadedSkill>).filter((s) => !registry.skills.has(s));
    const tools = (JSON.parse(r.tool_table) as string[]).filter((t) => !registry.tools.has(t));
    if (image || skills.length || tools.length) out.push({ pid: r.pid, status: r.status, image, skills, tools });
  }
  return out;
}

/**
 * Refuses to open a store whose live processes need a plugin this runtime did not load: `plugin_missing` naming
 * each missing plugin (from the store's record of what contributed the image, Skill or tool; its version too) and
 * the processes that need it. Runs before any open hook or recovery, so nothing is marked failed; opening again
 * with the plugin works as before.
 */
export async function assertStorePlugins(db: KernelStore, registry: Registry, location: string): Promise<void> {
  const needs = await unmetNeeds(db, registry);
  if (needs.length === 0) return;
  const recorded = await recordedPlugins(db);
  const owners = (n: ProcessNeeds) => {
    const names = new Set<string>();
    const unknown: string[] = [];
    const find = (kind: 'images' | 'skills' | 'tools', item: string) => {
      const r = recorded.find((p) => p[kind].includes(item) && !registry.plugins.some((q) => q.name === p.name));
      if (r) names.add(r.name);
      else unknown.push(`${kind.slice(0, -1)} ${item}`);
    };
    if (n.image) find('images', n.image);
    for (const s of n.skills) find('skills', s);
    for (const t of n.tools) find('tools', t);
    return { names: [...names], unknown };
  };
  const byPlugin = new Map<string, string[]>();
  const unrecorded: string[] = [];
  for (const n of needs) {
    const o = owners(n);
    for (const name of o.names) byPlugin.set(name, [...(byPlugin.get(name) ?? []), n.pid]);
    if (o.unknown.length) unrecorded.push(`${n.pid} (${o.unknown.join(', ')})`);
  }
  const missing = [...byPlugin].map(([name, pids]) => ({ name, version: recorded.find((p) => p.name === name)!.version, processes: pids }));
  const parts = missing.map((m) => `${m.name} ${m.version} (needed by ${m.processes.join(', ')})`);
  if (unrecorded.length) parts.push(`plugins the store did not record, for ${unrecorded.join('; ')}`);
  const what = missing.length === 1 && !unrecorded.length ? 'a plugin' : 'plugins';
  const message =
    `store ${location} needs ${what} this runtime did not load: ${parts.join('; ')}. ` +
    'Load it (libos --plugin <spec>, or the plugins key of libos.config.json) and open the store again; nothing was changed';
  throw new LibosError('plugin_missing', message, { details: { path: location, missing_plugins: missing, processes: needs } });
}

/**
 * Records the plugins this runtime loaded (name, version, what each contributes), in one transaction; a plugin
 * recorded exactly so already is not written again, so an open with the same plugins writes nothing here.
 */
export async function recordStorePlugins(db: KernelStore, registry: Registry, nowIso: string): Promise<void> {
  const before = new Map((await recordedPlugins(db)).map((p) => [p.name, p]));
  const changed = registry.plugins.flatMap((p) => {
    const skills = [...registry.skills].filter(([, s]) => s.plugin === p.name).map(([id]) => id);
    const tools = [...registry.tools].filter(([, t]) => t.plugin === p.name).map(([name]) => name);
    const images = (p.images ?? []).map((i) => i.id);
    const row = {
      version: String(p.version ?? ''),
      skills: JSON.stringify(skills),
      tools: JSON.stringify(tools),
      images: JSON.stringify(images),
    };
    const old = before.get(p.name);
    const same =
      old &&
      old.version === row.version &&
      JSON.stringify(old.skills) === row.skills &&
      JSON.stringify(old.tools) === row.tools &&
      JSON.stringify(old.images) === row.images;
    return same ? [] : [{ name: p.name, row: { ...row, last_loaded_at: nowIso } }];
  });
  if (changed.length === 0) return;
  await db.transaction().execute(async (tx) => {
    for (const { name, row } of changed) {
      await tx
        .insertInto('libos_plugins')
        .values({ name, ...row, first_loaded_at: nowIso })
        .onConflict((oc) => oc.column('name').doUpdateSet(row))
        .execute();
    }
  });
}
