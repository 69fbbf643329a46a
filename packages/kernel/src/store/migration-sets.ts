import { CAPABILITY_MIGRATIONS } from '@libos/capabilities';
import type { Migration, Plugin } from '@libos/sdk';
import { LLM_CONTEXT_MIGRATIONS_OWNER, llmContextMigrations } from '../context/context-store.js';
import { STORE_PLUGINS_MIGRATIONS_OWNER, storePluginsMigrations } from '../plugins/store-plugins.js';
import { kernelMigrations } from './kernel-schema.js';
import type { MigrationSet } from './migrate.js';

const CAPABILITIES_PLUGIN = '@libos/capabilities';

/**
 * The sets `openRuntime` migrates, in its order: the kernel's three, the authority engine's (the kernel runs it,
 * loaded or not), then each plugin's in load order (the capabilities plugin's copy of the engine's is not run twice).
 */
export function storeMigrationSets(engineMigrations: readonly Migration[], pluginSets: readonly MigrationSet[]): MigrationSet[] {
  return [
    { owner: '@libos/kernel', migrations: kernelMigrations },
    { owner: LLM_CONTEXT_MIGRATIONS_OWNER, migrations: llmContextMigrations },
    { owner: STORE_PLUGINS_MIGRATIONS_OWNER, migrations: storePluginsMigrations },
    { owner: CAPABILITIES_PLUGIN, migrations: engineMigrations },
    ...pluginSets.filter((m) => m.owner !== CAPABILITIES_PLUGIN),
  ];
}

/**
 * The migration sets a runtime opened with `plugins` runs, in order (the kernel's own plugins have none): what a
 * tool that prepares or checks a store ahead of `openRuntime` migrates with `migrate`.
 *
 * @example
 * const owners = migrationSetsFor([capabilities(), objectMemory(), tasks()]).map((s) => s.owner);
 * // ['@libos/kernel', '@libos/kernel:llm-context', '@libos/kernel:plugins', '@libos/capabilities', '@libos/object-memory', '@libos/tasks']
 */
export function migrationSetsFor(plugins: readonly Plugin[]): readonly MigrationSet[] {
  const pluginSets = plugins.flatMap((p) => (p.migrations?.length ? [{ owner: p.name, migrations: p.migrations }] : []));
  return storeMigrationSets(CAPABILITY_MIGRATIONS, pluginSets);
}
