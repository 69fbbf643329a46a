import { LibosError } from '@libos/sdk';
import type { ToolCallResult } from '../broker/tool-result.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { processNotFound, readCaller, resolveTool } from './1-resolve-tool.js';
import { checkStatus } from './2-check-status.js';
import { admitParsed, parseCallArguments } from './3-parse-arguments.js';
import { commitCall, recordFailure } from './6-commit.js';
import { envelope } from './7-envelope.js';
import { CALL_HOOKS } from './call-hooks.js';
import { newCall, type CallOptions, type CallState, type ParsedCall } from './call-state.js';
import type { CallHook } from './hooks.js';

/**
 * The one path of every tool call, in DESIGN.md's order: 1 the name is in the caller's table; 2 the caller's status
 * allows calls; 3 arguments parse (nothing else runs otherwise); 4 one tool call is charged to the pid and every
 * ancestor; 5 `run` checks capabilities and acts; 6 state, audit and events commit in one transaction; 7 the envelope
 * carries the payload, a wait, or a closed-table error. Steps 1–3 run nothing: a refusal there is audited uncharged.
 * Mailbox interrupts and notices, human approval, runner settlement and result publishing are the subsystems' hooks.
 */
export async function runCall(
  deps: KernelDeps,
  pid: string,
  tool: string,
  rawArgs: unknown,
  opts: CallOptions = {},
  hooks: readonly CallHook[] = CALL_HOOKS,
): Promise<ToolCallResult> {
  const call = newCall(deps, pid, tool, rawArgs, opts);
  const caller = await readCaller(call);
  if (!caller) return envelope(call, hooks, { kind: 'failed', error: processNotFound(pid) });
  let reached: CallState = call;
  let parsed: ParsedCall;
  try {
    const resolved = resolveTool(call, caller);
    reached = resolved;
    await checkStatus(resolved, hooks);
    parsed = parseCallArguments(resolved);
    reached = parsed;
    await admitParsed(parsed, hooks);
  } catch (err) {
    return envelope(reached, hooks, await recordFailure(reached, hooks, LibosError.from(err), false));
  }
  return envelope(parsed, hooks, await commitCall(parsed, hooks));
}
