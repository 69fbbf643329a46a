import { LibosError, type Plugin } from '@libos/sdk';
import { childProcessesPlugin } from '../children/child-processes-plugin.js';
import { BUILTIN_IMAGES } from '../images/builtin-images.js';
import { agentImagesPlugin } from '../images/exec-process.js';
import { skillNavigationPlugin } from '../skills/skill-navigation.js';
import { loadPlugins } from './load-plugins.js';
import type { Registry } from './registry.js';

/** The kernel's own plugins (Skill navigation, child processes, agent images), for a registry with no runtime. */
function kernelPlugins(registry: () => Registry): Plugin[] {
  const noRuntime = () => {
    throw new LibosError('invalid_state', 'checkPlugins builds a registry only: no tool runs without openRuntime');
  };
  return [skillNavigationPlugin(registry), childProcessesPlugin(noRuntime), agentImagesPlugin(noRuntime)];
}

/**
 * Validates plugins exactly as `openRuntime` does, with the kernel's own Skills and images loaded beside them, and
 * opens no store: what `libos skills validate` and `libos plugins` use. Throws `plugin_invalid` listing every
 * problem (file and field); returns the registry otherwise.
 *
 * @example
 * declare const weather: () => Plugin; // a plugin package's factory
 * checkPlugins([capabilities(), objectMemory(), weather()]).skills.has('weather'); // true
 */
export function checkPlugins(plugins: readonly Plugin[]): Registry {
  let registry: Registry | undefined;
  registry = loadPlugins([...kernelPlugins(() => registry!), ...plugins], BUILTIN_IMAGES);
  return registry;
}
