import { humanCallHook } from '../human/call-hook.js';
import { mailboxCallHook } from '../mailbox/call-hook.js';
import { runnerCallHook } from '../processes/runner-call-hook.js';
import { resultsCallHook } from '../results/call-hook.js';
import type { CallHook } from './hooks.js';

/**
 * The hooks the kernel's subsystems register on the call path, in the order they run at each point: the mailbox
 * (interrupts, notices), human approval (rejected approvals, parking), runners (ObjectTask settlement), results.
 */
export const CALL_HOOKS: readonly CallHook[] = Object.freeze([mailboxCallHook, humanCallHook, runnerCallHook, resultsCallHook]);
