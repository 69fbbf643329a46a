import {
  DEFAULT_LABELS,
  LibosError,
  SERVICE_NAMES,
  type HumanService,
  type MailboxService,
  type ObjectsService,
  type ProcessService,
  type RunnerService,
  type ServiceScope,
} from '@libos/sdk';
import { observedSuccessfulTools } from '../events/observed-tools.js';
import { deliverHumanOutput } from '../human/human-output.js';
import { createHumanRequest, getHumanRequest } from '../human/human-queue.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { humanMessagesOf } from '../mailbox/human-messages.js';
import { postMessage } from '../mailbox/post-message.js';
import { endProcess, liveChildren } from '../processes/exit.js';
import { TERMINAL_PROCESS_STATUSES } from '../processes/process-record.js';
import { findProcess, getProcess } from '../processes/process-store.js';
import {
  findRunner,
  outcomeOf,
  resolveRunnerTool,
  runnerState,
  spawnRunner,
  validateRunnerArgs,
  wakeTaskWaiters,
} from '../processes/runners.js';
import { resultsService } from '../results/publish-result.js';
import { clearSink, humanSink } from '../sinks/clear-sink.js';
import { kernelScope, storeOf } from '../store/kernel-scope.js';
import { llmContextService } from '../context/context-service.js';
import { recordedExitPayload, savedCallsOf, spawnChildForHost } from './process-extras.js';
import { subtreeStateService } from '../subtree/subtree-state-service.js';
import { sinksService } from '../sinks/sinks-service.js';
import { resources } from '@libos/sdk';

/**
 * Services the kernel itself provides to plugins (by the sdk's interfaces): `processes`, `human`, `runners`,
 * `mailbox`, `results` (the one tool-result publisher) and `sinks` (the one sink clearance, for data a plugin sends out).
 */
export function kernelServices(deps: () => KernelDeps): Record<string, (scope: ServiceScope) => unknown> {
  return {
    processes: (scope): ProcessService => ({
      async get(pid) {
        const p = await getProcess(storeOf(scope), pid);
        const image = deps().registry.images.get(p.imageId);
        return {
          pid: p.pid,
          parentPid: p.parentPid,
          imageId: p.imageId,
          status: p.status,
          goalOid: p.goalOid,
          imageMetadata: image?.metadata ?? {},
          toolTable: p.toolTable,
          outcome: p.outcome,
        };
      },
      async exit(pid, outcome) {
        // A runner (an ObjectTask) outlives its creator's exit: the creator's exit neither waits for it nor cancels it.
        const live: string[] = [];
        for (const child of await liveChildren(kernelScope(scope), pid)) {
          if (!(await findRunner(storeOf(scope), child))) live.push(child);
        }
        if (live.length > 0) {
          throw new LibosError(
            'invalid_state',
            `process_exit: ${pid} still has live children (${live.join(', ')}); wait for them or signal them before exiting`,
            { details: { live_children: live } },
          );
        }
        // The result goes to the parent (wait_child_process hands it a read handle): it leaves only if cleared.
        const me = await getProcess(storeOf(scope), pid);
        if (me.parentPid && outcome.resultOid) {
          const result = await scope.service<ObjectsService>(SERVICE_NAMES.objects).describe(outcome.resultOid);
          if (!result) {
            const details = { result_oid: outcome.resultOid };
            throw new LibosError('object_not_found', `result_oid: no live Object ${outcome.resultOid}`, { details });
          }
          await clearSink(deps().engine, scope, pid, resources.process(me.parentPid), { labels: result.labels, field: 'result' });
        }
        const ended = await endProcess(deps(), kernelScope(scope), pid, { kind: 'exited', result_oid: outcome.resultOid });
        return { pid, status: 'exited', result_oid: outcome.resultOid, state_generation: ended.stateGeneration };
      },
      async humanMessages(pid, opts) {
        await getProcess(storeOf(scope), pid);
        return humanMessagesOf(storeOf(scope), pid, opts);
      },
      spawnChild: (parentPid, req) => spawnChildForHost(deps(), kernelScope(scope), parentPid, req),
      recordedExitPayload: (pid) => recordedExitPayload(kernelScope(scope), pid),
      savedCalls: (tool) => savedCallsOf(kernelScope(scope), tool),
      async observedSuccessfulTools(pid) {
        await getProcess(storeOf(scope), pid);
        return observedSuccessfulTools(storeOf(scope), pid, ['process_exit']);
      },
    }),
    runners: (scope): RunnerService => {
      const tx = kernelScope(scope);
      return {
        resolveTool: async (callerPid, tool) => resolveRunnerTool(deps(), await getProcess(tx.store, callerPid), tool),
        validateArgs: (tool, args) => validateRunnerArgs(deps(), tool, args),
        spawn: (req) => spawnRunner(deps(), tx, req),
        get: (pid) => runnerState(tx.store, pid),
        async end(pid, how) {
          const p = await findProcess(tx.store, pid);
          if (!p || TERMINAL_PROCESS_STATUSES.has(p.status)) return false;
          await endProcess(deps(), tx, pid, outcomeOf(how));
          return true;
        },
        wakeTaskWaiters: (taskId) => wakeTaskWaiters(tx, taskId),
      };
    },
    mailbox: (scope): MailboxService => ({
      async post(m) {
        // What a subsystem posts (e.g. an ObjectTask's notification) carries its labels to the recipient: cleared first.
        const labels = m.labels ?? DEFAULT_LABELS;
        await clearSink(deps().engine, scope, m.sender, resources.process(m.recipientPid), { labels, field: 'message' });
        const msg = await postMessage(kernelScope(scope), {
          recipientPid: m.recipientPid,
          sender: m.sender,
          channel: m.channel,
          payload: m.payload,
          ...(m.kind !== undefined ? { kind: m.kind } : {}),
          ...(m.delivery !== undefined ? { delivery: m.delivery } : {}),
          ...(m.subject !== undefined ? { subject: m.subject } : {}),
          ...(m.body !== undefined ? { body: m.body } : {}),
          ...(m.correlationId !== undefined ? { correlationId: m.correlationId } : {}),
          ...(m.labels !== undefined ? { labels: m.labels } : {}),
        });
        return { message_id: msg.message_id };
      },
    }),
    results: resultsService,
    [SERVICE_NAMES.llmContext]: llmContextService,
    [SERVICE_NAMES.subtreeState]: (scope) => subtreeStateService(deps, scope),
    [SERVICE_NAMES.sinks]: (scope) => sinksService(deps, scope),
    human: (scope): HumanService => ({
      async create(pid, req) {
        // The prompt is the process's text (e.g. a permission request's reason): it reaches only a human cleared for its flow.
        const human = typeof req.details?.human === 'string' ? req.details.human : 'owner';
        await clearSink(deps().engine, scope, pid, humanSink(human, req.kind), { field: 'prompt' });
        return createHumanRequest(storeOf(scope), pid, req, scope.clock.now().toISOString());
      },
      get: (id) => getHumanRequest(storeOf(scope), id),
      async output(pid, out) {
        await getProcess(storeOf(scope), pid);
        return deliverHumanOutput(deps(), scope, pid, out);
      },
    }),
  };
}
