// Types of crash-effects.mjs (plain JavaScript, because the workload child runs it on the built packages).
import type { Plugin } from '@libos/sdk';

export declare const CRASH_AGENT_IMAGE: string;
export declare const EFFECT_TOOL: string;
export declare const EFFECT_SKILL: string;
export declare const CRASH_AGENT_TOOLS: readonly string[];
export declare function effectResource(key: string): string;
/**
 * The crash suite's plugin; `log` is the file the effect tool appends its outside-world lines to, `afterEffect` runs
 * after that line and before the call's transaction commits (`resumed`: the call is a saved call resuming).
 */
export declare function crashEffects(opts: {
  log: string;
  afterEffect?: (effect: { key: string; resumed: boolean }) => Promise<void>;
}): Plugin;
