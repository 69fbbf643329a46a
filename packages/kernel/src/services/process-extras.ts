import { LibosError, type ChildSpawnRequest, type SavedCall } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { findPendingAction } from '../processes/pending-actions.js';
import { spawnInScope } from '../processes/spawn.js';
import type { KernelScope } from '../store/kernel-scope.js';

/**
 * `ProcessService.spawnChild`: a direct child of `parentPid` in the caller's transaction, with a budget carved from
 * the parent's remaining and no grants. The caller has checked `process:spawn` (and the image) already.
 */
export async function spawnChildForHost(
  deps: KernelDeps,
  scope: KernelScope,
  parentPid: string,
  req: ChildSpawnRequest,
): Promise<{ pid: string; goalOid: string | null }> {
  const child = await spawnInScope(deps, scope, {
    goal: req.goal,
    image: req.image,
    parentPid,
    ...(req.labels ? { labels: req.labels } : {}),
  });
  return { pid: child.pid, goalOid: child.goalOid };
}

/**
 * `ProcessService.recordedExitPayload`: the `payload` argument of the last `process_exit` call in `pid`'s recorded
 * model replies. Only full-I/O records hold the calls; a preview-and-hash record (persist_full_io off) holds none.
 */
export async function recordedExitPayload(scope: KernelScope, pid: string): Promise<{ found: boolean; payload?: unknown }> {
  const rows = await scope.store
    .selectFrom('llm_calls')
    .select(['response'])
    .where('pid', '=', pid)
    .where('status', '=', 'ok')
    .orderBy('seq', 'desc')
    .limit(20)
    .execute();
  for (const row of rows) {
    if (typeof row.response !== 'string') continue;
    const response = JSON.parse(row.response) as { tool_calls?: { name?: string; arguments?: Record<string, unknown> }[] };
    if (!Array.isArray(response.tool_calls)) continue;
    const exit = [...response.tool_calls].reverse().find((c) => c?.name === 'process_exit');
    if (exit?.arguments && Object.hasOwn(exit.arguments, 'payload')) return { found: true, payload: exit.arguments.payload };
  }
  return { found: false };
}

/** `ProcessService.savedCalls`: every saved waiting call of `tool`. */
export async function savedCallsOf(scope: KernelScope, tool: string): Promise<SavedCall[]> {
  if (tool.trim() === '') throw new LibosError('invalid_arguments', 'tool: must be a tool name');
  const rows = await scope.store.selectFrom('pending_actions').select('pid').where('tool', '=', tool).orderBy('pid').execute();
  const out: SavedCall[] = [];
  for (const r of rows) {
    const a = await findPendingAction(scope.store, r.pid);
    if (a && a.tool === tool) out.push({ pid: a.pid, tool: a.tool, callId: a.callId, args: a.args, wait: a.wait, status: a.status });
  }
  return out;
}
