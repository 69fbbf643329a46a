// Types of host-effects.mjs (plain JavaScript, because the host children run it on the built packages).
import type { LlmScript } from '@libos/kernel';
import type { Plugin } from '@libos/sdk';

export declare const HOST_AGENT_IMAGE: string;
export declare const EFFECT_TOOL: string;
export declare function effectResource(pid: string): string;
export declare const HOST_SCRIPT: LlmScript;
/** The multi-host suite's plugin; `log` is the outside file each effect appends to, `host` names the host in it. */
export declare function hostEffects(opts: { log: string; host: string }): Plugin;
