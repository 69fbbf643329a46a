import type { RunnerOutcome } from '@libos/sdk';
import type { CallSettlement } from '../call/call-state.js';
import type { CallHook } from '../call/hooks.js';
import { observerOf, refOf } from './runners.js';

/** A runner's outcome as its observer hears it: a success carries the call's flow (labels and sources). */
async function runnerOutcome(callId: string, how: CallSettlement): Promise<RunnerOutcome> {
  switch (how.kind) {
    case 'succeeded':
      return { kind: 'succeeded', callId, payload: how.payload, labels: await how.flow.labels(), sourceOids: how.flow.sources() };
    case 'waiting':
      return { kind: 'waiting', callId, wait: how.wait };
    case 'failed':
      return { kind: 'failed', callId, error: how.error };
  }
}

/**
 * Runner settlement on the call path (docs/behaviour/object-tasks.md): a runner's saved call (an ObjectTask) tells the
 * runner's observer that it starts, and how it settles (done, waiting, or failed), inside the same transaction as
 * the call's own effects or its failure record.
 */
export const runnerCallHook: CallHook = {
  name: 'runners',
  async started(call, scope) {
    if (call.origin.kind !== 'runner') return;
    await observerOf(call.deps, scope, call.origin.runner)?.started(refOf(call.origin.runner));
  },
  async settled(call, scope, how) {
    if (call.origin.kind !== 'runner') return;
    const observer = observerOf(call.deps, scope, call.origin.runner);
    await observer?.settled(refOf(call.origin.runner), await runnerOutcome(call.callId, how));
  },
};
