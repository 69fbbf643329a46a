import { resources } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { endProcess } from '../processes/exit.js';
import { transition } from '../processes/transition.js';
import { inTransaction, type TxScope } from './transaction.js';

/**
 * Reopen rules (K-25 in docs/behaviour/kernel.md), before any work is admitted: a process found `running` was cut off mid-quantum
 * and becomes `paused` (never replayed); a pending action found `resuming` had unknown settlement, so its process
 * fails closed with the audit `llm.pending_action_resume_interrupted`. Waiting processes and their pending actions
 * stay as they are.
 */
export async function recoverOnOpen(deps: KernelDeps): Promise<Recovered> {
  return inTransaction(deps.db, deps.scopes, 'host', null, (scope) => recoverIn(deps, scope, null));
}

/** What recovery did: processes paused (cut off mid-quantum) and failed (a resuming action of unknown settlement). */
export interface Recovered {
  readonly paused: string[];
  readonly failed: string[];
}

/**
 * The reopen rules in the caller's transaction, for the whole store (`root` null: an open) or for one process tree
 * (a host taking over the tree of a host that stopped renewing its lease, `hosts/shared-host.ts`).
 */
export async function recoverIn(deps: KernelDeps, scope: TxScope, root: string | null): Promise<Recovered> {
  const now = deps.clock.now().toISOString();
  const failed: string[] = [];
  const inTree = root === null ? null : scope.store.selectFrom('processes').select('pid').where('root_pid', '=', root);
  for (const row of await scope.store
    .selectFrom('pending_actions')
    .select(['pid', 'tool', 'call_id'])
    .where('status', '=', 'resuming')
    .$if(inTree !== null, (q) => q.where('pid', 'in', inTree!))
    .execute()) {
    await scope.audit.record({
      action: 'llm.pending_action_resume_interrupted',
      target: resources.process(row.pid),
      decision: 'failed',
      details: { pid: row.pid, tool: row.tool, call_id: row.call_id },
    });
    const p = await scope.store.selectFrom('processes').select('status').where('pid', '=', row.pid).executeTakeFirst();
    if (p?.status === 'running') await transition(scope.store, row.pid, { from: ['running'], to: 'runnable' }, now);
    await endProcess(deps, scope, row.pid, {
      kind: 'failed',
      code: 'pending_action_resume_interrupted',
      message: `the runtime stopped while ${row.tool} was resuming; its effect is unknown, so it is not replayed`,
    });
    failed.push(row.pid);
  }
  const paused: string[] = [];
  for (const row of await scope.store
    .selectFrom('processes')
    .select('pid')
    .where('status', '=', 'running')
    .$if(root !== null, (q) => q.where('root_pid', '=', root!))
    .execute()) {
    await transition(
      scope.store,
      row.pid,
      {
        from: ['running'],
        to: 'paused',
        wait: { kind: 'paused', reason: 'the runtime stopped during its quantum; resume it explicitly' },
      },
      now,
    );
    await scope.audit.record({
      action: 'process.recovered',
      target: resources.process(row.pid),
      decision: 'paused',
      details: { pid: row.pid },
    });
    paused.push(row.pid);
  }
  return { paused, failed };
}
