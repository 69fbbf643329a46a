import { definePlugin, type Plugin } from '@libos/sdk';

/**
 * The runtime-session plugin (`agent-libos-runtime-session`: time, sleep, compaction, process_exit). Its tools
 * land with the kernel-processes and session issues; until then it contributes no Skill and no tool.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [session()] });
 */
export function session(): Plugin {
  return definePlugin({ name: '@libos/session', version: '0.1.0', skills: [], tools: [] });
}
