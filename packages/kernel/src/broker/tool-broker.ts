import type { CallOptions } from '../call/call-state.js';
import { runCall } from '../call/pipeline.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { inDepsUnit } from '../store/unit-of-work.js';
import { traceToolCall } from '../telemetry/gen-ai-spans.js';
import type { ToolCallResult } from './tool-result.js';

export type { CallOptions, CallOrigin } from '../call/call-state.js';

/**
 * A call's own unit of work: nothing is written after the call's final savepoint (step 6's result or wait, a parked
 * call, a failure record), so that savepoint may carry the unit's COMMIT (K-15.21).
 */
const inOwnUnit = <T>(deps: KernelDeps, fn: (d: KernelDeps) => Promise<T>) => inDepsUnit(deps, fn, { endsAfterLast: true });

/**
 * The ToolBroker: the one entry of every caller (LLM executor, CLI, HTTP, MCP, task runner) to the typed call
 * pipeline in `../call/` (DESIGN.md's seven steps, with the subsystems' hooks). Never throws for a tool failure: a
 * failed call is an `{ ok: false }` envelope whose failure is audited; a call that waits commits its wait state and a
 * durable pending action instead. A call is one unit of work: one commit (inside a quantum's unit, none of its own).
 */
export function callTool(deps: KernelDeps, pid: string, name: string, rawArgs: unknown, opts: CallOptions = {}): Promise<ToolCallResult> {
  return traceToolCall(pid, name, opts, () =>
    inOwnUnit(deps, async (d) => {
      // One of many hosts: the caller's tree is locked first, so calls from other hosts queue instead of conflicting.
      if (d.trees) await d.trees.lock(d.db, pid);
      return runCall(d, pid, name, rawArgs, opts);
    }),
  );
}
