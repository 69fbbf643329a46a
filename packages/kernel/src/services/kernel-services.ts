import { LibosError, type HumanService, type ProcessService, type ServiceScope } from '@libos/sdk';
import { observedSuccessfulTools } from '../events/observed-tools.js';
import { createHumanRequest, getHumanRequest } from '../human/human-queue.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { humanMessagesOf } from '../mailbox/human-messages.js';
import { endProcess, liveChildren } from '../processes/exit.js';
import { getProcess } from '../processes/process-store.js';
import type { TxScope } from '../store/transaction.js';

/**
 * Services the kernel itself provides to plugins (by the sdk's interfaces): `processes` and `human`.
 */
export function kernelServices(deps: () => KernelDeps): Record<string, (scope: ServiceScope) => unknown> {
  return {
    processes: (scope): ProcessService => ({
      async get(pid) {
        const p = await getProcess(scope.store as TxScope['store'], pid);
        const image = deps().registry.images.get(p.imageId);
        return { pid: p.pid, parentPid: p.parentPid, imageId: p.imageId, status: p.status, goalOid: p.goalOid, imageMetadata: image?.metadata ?? {}, toolTable: p.toolTable };
      },
      async exit(pid, outcome) {
        const live = await liveChildren(scope as TxScope, pid);
        if (live.length > 0) {
          throw new LibosError('invalid_state', `process_exit: ${pid} still has live children (${live.join(', ')}); wait for them or signal them before exiting`, { details: { live_children: live } });
        }
        const ended = await endProcess(deps(), scope as TxScope, pid, { kind: 'exited', result_oid: outcome.resultOid });
        return { pid, status: 'exited', result_oid: outcome.resultOid, state_generation: ended.stateGeneration };
      },
      async humanMessages(pid, opts) {
        await getProcess(scope.store as TxScope['store'], pid);
        return humanMessagesOf(scope.store as TxScope['store'], pid, opts);
      },
      async observedSuccessfulTools(pid) {
        await getProcess(scope.store as TxScope['store'], pid);
        return observedSuccessfulTools(scope.store as TxScope['store'], pid, ['process_exit']);
      },
    }),
    human: (scope): HumanService => ({
      create: (pid, req) => createHumanRequest(scope.store as TxScope['store'], pid, req, scope.clock.now().toISOString()),
      get: (id) => getHumanRequest(scope.store as TxScope['store'], id),
    }),
  };
}
