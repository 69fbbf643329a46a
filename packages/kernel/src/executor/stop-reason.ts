import type { WaitSpec } from '@libos/sdk';
import type { ToolCallResult } from '../broker/tool-result.js';

/**
 * Why a batch (or a resumed call) stopped (docs/behaviour/kernel.md). A wait stops it as `waiting_<kind>` of its wait:
 * `waiting_timer` is a `sleep`. `exclusive` and `empty_reply` are the TS scheduler's own.
 */
export type StopReason =
  | 'completed'
  | 'waiting_human'
  | 'waiting_child'
  | 'waiting_message'
  | 'waiting_task'
  | 'waiting_timer'
  | 'tool_failed'
  | 'message_notice'
  | 'interrupted_by_message'
  | 'process_terminal'
  | 'resource_limit_exceeded'
  | 'exclusive'
  | 'empty_reply';

const unreachable = (x: never): never => {
  throw new TypeError(`unreachable: ${JSON.stringify(x)}`);
};

/** The stop reason of a call that parked in `wait`. */
export function waitStopReason(wait: WaitSpec): StopReason {
  switch (wait.kind) {
    case 'human':
      return 'waiting_human';
    case 'child':
      return 'waiting_child';
    case 'message':
      return 'waiting_message';
    case 'task':
      return 'waiting_task';
    case 'timer':
      return 'waiting_timer';
    default:
      return unreachable(wait);
  }
}

/** Why a call stops its batch (null: the batch goes on): its failure, its wait, or a notice riding on its result. */
export function callStopReason(r: ToolCallResult): StopReason | null {
  if (!r.ok) {
    if (r.error.code === 'interrupted_by_message') return 'interrupted_by_message';
    return r.error.code === 'resource_limit_exceeded' ? 'resource_limit_exceeded' : 'tool_failed';
  }
  if (r.wait) return waitStopReason(r.wait);
  return r.notices?.length ? 'message_notice' : null;
}

/** What a stop leaves of the quantum's process: still running (handed back as runnable), parked in a wait, or ended. */
export type StopAftermath = 'hand_back' | 'parked' | 'ended';

export function stopAftermath(stop: StopReason): StopAftermath {
  switch (stop) {
    case 'completed':
    case 'tool_failed':
    case 'message_notice':
    case 'interrupted_by_message':
    case 'resource_limit_exceeded':
    case 'exclusive':
    case 'empty_reply':
      return 'hand_back';
    case 'waiting_human':
    case 'waiting_child':
    case 'waiting_message':
    case 'waiting_task':
    case 'waiting_timer':
      return 'parked';
    case 'process_terminal':
      return 'ended';
    default:
      return unreachable(stop);
  }
}
