import type { ToolCallResult, ToolNotice } from '../broker/tool-result.js';
import type { CallOutcome, CallState } from './call-state.js';
import { hooksAt, type CallHook } from './hooks.js';

/**
 * Step 7: the envelope. A result carries the payload and any notices the hooks attach (after the commit); a wait
 * carries its spec; a failure carries `{ code, message, details }` from the closed table in `@libos/sdk`.
 */
export async function envelope(call: CallState, hooks: readonly CallHook[], outcome: CallOutcome): Promise<ToolCallResult> {
  const head = { call_id: call.callId, tool: call.toolName };
  switch (outcome.kind) {
    case 'failed':
      return { ok: false, ...head, error: outcome.error.toJSON() };
    case 'waiting':
      return { ok: true, ...head, payload: null, wait: outcome.wait };
    case 'done': {
      const notices: ToolNotice[] = [];
      for (const h of hooksAt(hooks, 'notices')) notices.push(...(await h.notices(call)));
      return { ok: true, ...head, payload: outcome.payload, ...(notices.length ? { notices } : {}) };
    }
  }
}
