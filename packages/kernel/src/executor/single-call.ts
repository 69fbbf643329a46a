import { LibosError } from '@libos/sdk';
import { parseArguments } from '../broker/parse-arguments.js';
import type { LlmProfile } from '../config/host-config.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { LlmToolCall } from '../llm/provider.js';

/** Why the calls a single-call turn did not run were dropped (the `llm.action_batch` audit's `dropped_reason`). */
export const DROPPED_BY_SINGLE_CALL = 'parallel_tool_calls_disabled';

/**
 * Whether a turn may dispatch a batch: the run's LLM profile decides (`parallel_tool_calls`, default false in a
 * profile); a run without a profile dispatches every call of a reply in order, as the scripted provider's tests expect.
 */
export function parallelToolCallsOf(opts: { readonly profile?: LlmProfile | null }): boolean {
  return opts.profile ? opts.profile.parallel_tool_calls : true;
}

/** A call the broker would accept: arguments that parsed as a JSON object, a defined tool, its input schema satisfied. */
function isValidCall(deps: KernelDeps, call: LlmToolCall): boolean {
  if (call.argumentsError !== undefined) return false;
  const tool = deps.registry.tools.get(call.name)?.tool;
  if (!tool) return false;
  try {
    parseArguments(tool, call.arguments);
    return true;
  } catch (err) {
    if (err instanceof LibosError && err.code === 'invalid_arguments') return false;
    throw err;
  }
}

/**
 * One action per turn with parallel tool calls off: the LAST valid call of the reply is kept and every other call is
 * dropped (it never runs). When no call is valid the last one is kept, so the model gets its error back.
 *
 * @example
 * const create: LlmToolCall = { id: 'c1', name: 'create_memory_object', arguments: { name: 'a' } };
 * const exit: LlmToolCall = { id: 'c2', name: 'process_exit', arguments: { message: 'done' } };
 * const lastOnly = (deps: KernelDeps) => keepLastValidCall(deps, [create, exit]); // { kept: [exit], dropped: [create] }
 */
export function keepLastValidCall(deps: KernelDeps, calls: readonly LlmToolCall[]): { kept: LlmToolCall[]; dropped: LlmToolCall[] } {
  if (calls.length <= 1) return { kept: [...calls], dropped: [] };
  let index = calls.length - 1;
  for (let i = calls.length - 1; i >= 0; i--) {
    if (isValidCall(deps, calls[i]!)) {
      index = i;
      break;
    }
  }
  return { kept: [calls[index]!], dropped: calls.filter((_, i) => i !== index) };
}
