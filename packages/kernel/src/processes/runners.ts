import { executeNow } from '../store/direct-queries.js';
import { readThrough } from '../store/memo-of.js';
import {
  LibosError,
  preparedQuery,
  type RunnerEnd,
  type RunnerObserver,
  type RunnerRef,
  type RunnerSpawnRequest,
  type RunnerState,
  type RunnerToolInfo,
} from '@libos/sdk';
import type { BudgetLimits } from '@libos/capabilities';
import { parseArguments } from '../broker/parse-arguments.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { findPendingAction, savePendingAction } from './pending-actions.js';
import type { LoadedSkill, ProcessInfo } from './process-record.js';
import { waitOfKind, type Outcome } from './process-state.js';
import { getProcess } from './process-store.js';
import { spawnInScope } from './spawn.js';
import { wakeIfWaiting } from './wake.js';
import { resources } from '@libos/sdk';
import type { NotNull } from 'kysely';
import type { KernelStore } from '../store/kernel-database.js';
import type { KernelScope } from '../store/kernel-scope.js';

/**
 * Host-managed runners (docs/behaviour/object-tasks.md): a child of its creator whose tool table is exactly one tool and
 * which is born holding that tool's call as its saved (pending) action. The scheduler's quantum resumes the saved
 * call without a model call, through the ToolBroker under the runner's own pid; the service named `observer`
 * hears, in the call's own transaction, that it started, how it settled, and when the runner ended.
 */

/** A runner's row in `process_runners`. */
export interface RunnerRecord {
  readonly pid: string;
  readonly operationId: string;
  readonly observer: string;
  readonly tool: string;
}

/**
 * A runner's own budget: its one call (charged at spawn, since a resumed call is never charged again), no children
 * and no model calls. The rest is carved from the creator as for any child.
 */
export const RUNNER_BUDGET: BudgetLimits = { tool_calls: 1, child_processes: 0, llm_calls: 0 };

/** A process's runner row, compiled once per store (every process's first quantum asks). */
const RUNNER_OF = preparedQuery(1, (db: KernelStore, [pid]) => db.selectFrom('process_runners').selectAll().where('pid', '=', pid!));

/** The runner record of `pid`, or null (most processes are not runners); through the store memo. */
export function findRunner(db: KernelStore, pid: string): Promise<RunnerRecord | null> {
  return readThrough(db, ['process_runners'], `runner:${pid}`, async () => {
    const r = (await db.executeQuery(RUNNER_OF(db, [pid]))).rows[0];
    return r ? Object.freeze({ pid: r.pid, operationId: r.operation_id, observer: r.observer, tool: r.tool }) : null;
  });
}

export const refOf = (r: RunnerRecord): RunnerRef => ({ pid: r.pid, operationId: r.operationId, tool: r.tool });

/** The service told about a runner's call and end, or null when no loaded plugin provides it. */
export function observerOf(deps: KernelDeps, scope: KernelScope, r: RunnerRecord): RunnerObserver | null {
  // A store reopened without the plugin that started the runner: nobody is left to tell.
  if (!deps.registry.services.has(r.observer)) return null;
  return scope.service<RunnerObserver>(r.observer);
}

/** Tells a runner's observer that the runner ended (called by `endProcess`, in its transaction). */
export async function runnerEnded(deps: KernelDeps, scope: KernelScope, ended: ProcessInfo): Promise<void> {
  const r = await findRunner(scope.store, ended.pid);
  if (!r) return;
  await observerOf(deps, scope, r)?.ended(refOf(r), ended.status as 'exited' | 'failed' | 'killed', ended.outcome);
}

/** The tool as `caller` sees it (`tool_not_found`, `tool_not_in_process_table`). */
export function resolveRunnerTool(deps: KernelDeps, caller: ProcessInfo, tool: string): RunnerToolInfo {
  const reg = deps.registry.tools.get(tool);
  if (!reg)
    throw new LibosError('tool_not_found', `tool: no loaded plugin defines a tool named ${JSON.stringify(tool)}`, {
      details: { field: 'tool', tool },
    });
  if (!caller.visibleTools.includes(tool)) {
    throw new LibosError(
      'tool_not_in_process_table',
      `tool: ${JSON.stringify(tool)} is not in the tool table of ${caller.pid} (activate skill ${reg.skill} to see it)`,
      {
        details: { field: 'tool', tool, pid: caller.pid, skill: reg.skill },
      },
    );
  }
  return { name: tool, skill: reg.skill, sideEffects: reg.tool.policy?.sideEffects === true };
}

/** Parses arguments against the tool's input (`invalid_arguments` naming every bad field). */
export function validateRunnerArgs(deps: KernelDeps, tool: string, args: unknown): Record<string, unknown> {
  const reg = deps.registry.tools.get(tool);
  if (!reg)
    throw new LibosError('tool_not_found', `tool: no loaded plugin defines a tool named ${JSON.stringify(tool)}`, {
      details: { field: 'tool', tool },
    });
  try {
    return parseArguments(reg.tool, args) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof LibosError && err.code === 'invalid_arguments') {
      // Name the field as the caller wrote it: these are `args.<field>` of the request, not top-level arguments.
      const fields = ((err.details?.fields as string[] | undefined) ?? []).map((f) => (f === '(arguments)' ? 'args' : `args.${f}`));
      throw new LibosError('invalid_arguments', `args: ${err.message}`, { details: { ...(err.details ?? {}), fields }, cause: err });
    }
    throw err;
  }
}

/**
 * Spawns a runner in the caller's transaction: a direct child of the creator with the runner budget, the host
 * grants and the checked delegations, a tool table of exactly `[tool]` (only that tool's Skill loaded), and the
 * saved call `{tool, args}` waiting as `{kind:'tool', operation_id}`. Its one tool call is charged now.
 */
export async function spawnRunner(deps: KernelDeps, scope: KernelScope, req: RunnerSpawnRequest): Promise<{ pid: string; callId: string }> {
  const creator = await getProcess(scope.store, req.creatorPid);
  const info = resolveRunnerTool(deps, creator, req.tool);
  const args = validateRunnerArgs(deps, req.tool, req.args);
  const inherit = req.inherit as never[];
  // Every delegation is checked before any runner state exists (a malformed or non-delegable spec refuses).
  if (inherit.length) await deps.engine.preflightInherit(scope, req.creatorPid, inherit);
  const callId = deps.ids.next('call');
  const skill = deps.registry.skills.get(info.skill)!;
  const child = await spawnInScope(deps, scope, {
    goal: req.goal,
    image: creator.imageId,
    parentPid: req.creatorPid,
    // The creator wrote the call's arguments: the runner's flow (and so its result) starts at the creator's.
    labels: await deps.engine.flow(scope, req.creatorPid).labels(),
    budget: RUNNER_BUDGET,
    beforeRunnable: async (pid) => {
      if (inherit.length) await deps.engine.inheritForSpawn(scope, req.creatorPid, pid, inherit);
      for (const g of req.grants) {
        await scope.authorityFor(pid).grantTrusted({
          subject: pid,
          resource: g.resource,
          rights: g.rights,
          metadata: { granted_by: 'runner', operation_id: req.operationId },
        });
      }
      const now = scope.clock.now().toISOString();
      const fresh = await getProcess(scope.store, pid);
      const loaded: Record<string, LoadedSkill> = {
        [info.skill]: { packageSha256: skill.manifest.packageSha256, tools: [...skill.manifest.allowedTools] },
      };
      const r = await scope.store
        .updateTable('processes')
        .set({
          tool_table: JSON.stringify([req.tool]),
          loaded_skills: JSON.stringify(loaded),
          revision: fresh.revision + 1,
          updated_at: now,
        })
        .where('pid', '=', pid)
        .where('revision', '=', fresh.revision)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1)
        throw new LibosError('conflict', `runner ${pid} changed concurrently (revision ${fresh.revision}); retry`);
      await scope.store
        .insertInto('process_runners')
        .values({ pid, operation_id: req.operationId, observer: req.observer, tool: req.tool, created_at: now })
        .execute();
      await savePendingAction(
        scope.store,
        { pid, callId, tool: req.tool, args, wait: { kind: 'tool', operation_id: req.operationId } },
        now,
      );
    },
  });
  await deps.engine.budgets(scope).charge(child.pid, { tool_calls: 1 });
  await scope.events.emit('runner_spawned', {
    pid: child.pid,
    parent_pid: req.creatorPid,
    operation_id: req.operationId,
    tool: req.tool,
    call_id: callId,
  });
  await scope.audit.record({
    action: 'process.runner_spawn',
    target: resources.process(child.pid),
    decision: 'ok',
    details: {
      creator: req.creatorPid,
      operation_id: req.operationId,
      tool: req.tool,
      call_id: callId,
      grants: req.grants.length,
      inherited: inherit.length,
    },
  });
  return { pid: child.pid, callId };
}

/** A runner's state, or null when `pid` is not a runner. */
export async function runnerState(db: KernelStore, pid: string): Promise<RunnerState | null> {
  const r = await findRunner(db, pid);
  if (!r) return null;
  const p = await getProcess(db, pid);
  const saved = await findPendingAction(db, pid);
  return {
    pid,
    parentPid: p.parentPid,
    operationId: r.operationId,
    tool: r.tool,
    status: p.status,
    waitState: p.waitState,
    outcome: p.outcome,
    toolTable: p.toolTable,
    savedCallWait: saved ? saved.wait : null,
  };
}

/** The kernel outcome of a runner end. */
export function outcomeOf(how: RunnerEnd): Outcome {
  if (how.kind === 'exited') return { kind: 'exited', result_oid: how.resultOid };
  if (how.kind === 'failed') return { kind: 'failed', code: how.code, message: how.message.slice(0, 2000) };
  return { kind: 'killed', code: how.code, reason: how.reason.slice(0, 2000) };
}

const taskWait = (p: Pick<ProcessInfo, 'waitState'>) => waitOfKind(p.waitState, 'task');

/**
 * Processes parked in a task wait (pid and wait only; a wake re-reads the row under its own check), found by the
 * indexed `wait_kind` column rather than by matching the wait's JSON text.
 */
async function taskWaiters(db: KernelStore): Promise<{ pid: string; waitState: Readonly<Record<string, unknown>> }[]> {
  const { rows } = await executeNow(db, TASK_WAITERS(db, []));
  const waiters = rows.map((r) => ({ pid: r.pid, waitState: JSON.parse(r.wait_state) as Record<string, unknown> }));
  return waiters.filter((p) => taskWait(p) !== null);
}

/** The task waiters' rows, compiled once per store (the scheduler asks on every pass). */
const TASK_WAITERS = preparedQuery(0, (db: KernelStore) =>
  db
    .selectFrom('processes')
    .select(['pid', 'wait_state'])
    .where('status', '=', 'waiting_event')
    .where('wait_kind', '=', 'task')
    .$narrowType<{ wait_state: NotNull }>(),
);

/** Wakes every process parked in a task wait for `taskId` (in the caller's transaction). */
export async function wakeTaskWaiters(scope: KernelScope, taskId: string): Promise<string[]> {
  const woken: string[] = [];
  for (const p of await taskWaiters(scope.store)) {
    if (taskWait(p)?.task_id !== taskId) continue;
    if (await wakeIfWaiting(scope, p.pid, (q) => taskWait(q)?.task_id === taskId, `task ${taskId} changed`)) woken.push(p.pid);
  }
  return woken;
}

/** The earliest deadline of a parked task wait, or null. */
export async function earliestTaskDeadline(db: KernelStore): Promise<string | null> {
  let min: string | null = null;
  for (const p of await taskWaiters(db)) {
    const d = taskWait(p)?.deadline;
    if (d !== undefined && (min === null || Date.parse(d) < Date.parse(min))) min = d;
  }
  return min;
}

/** Wakes every task wait whose deadline is at or before `upTo` (the scheduler, when nothing else can run). */
export async function wakeTaskDeadlines(scope: KernelScope, upTo: string): Promise<string[]> {
  const woken: string[] = [];
  for (const p of await taskWaiters(scope.store)) {
    const d = taskWait(p)?.deadline;
    if (d === undefined || Date.parse(d) > Date.parse(upTo)) continue;
    if (await wakeIfWaiting(scope, p.pid, (q) => taskWait(q)?.deadline === d, `task wait deadline ${d}`)) woken.push(p.pid);
  }
  return woken;
}
