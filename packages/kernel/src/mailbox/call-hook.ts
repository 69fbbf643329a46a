import { LibosError } from '@libos/sdk';
import type { ToolNotice } from '../broker/tool-result.js';
import type { CallState } from '../call/call-state.js';
import type { CallHook } from '../call/hooks.js';
import { TOOL_CALLABLE_STATUSES, type ProcessStatus } from '../processes/process-record.js';
import { findProcess } from '../processes/process-store.js';
import { unreadOf } from './unread-mail.js';

/** Tools that read or send mail: an unread interrupt does not stop them, and no notice rides on their results. */
export const MESSAGE_TOOLS: ReadonlySet<string> = new Set(['receive_process_messages', 'read_process_messages', 'send_process_message']);

async function statusOf(call: CallState): Promise<ProcessStatus | null> {
  return (await findProcess(call.deps.db, call.pid))?.status ?? null;
}

/**
 * The mailbox's part of the call path (K-21 in docs/behaviour/kernel.md): an unread interrupt refuses a fresh non-message call before
 * it runs (`interrupted_by_message`, step 2); unread normal mail adds a `message_notice` to a result (step 7), while
 * the process can still call tools.
 */
export const mailboxCallHook: CallHook = {
  name: 'mailbox',
  async admit(call) {
    if (MESSAGE_TOOLS.has(call.toolName) || call.entry.kind === 'saved') return;
    const interrupts = await unreadOf(call.deps.db, call.pid, 'interrupt');
    if (interrupts.count === 0) return;
    const ids = interrupts.message_ids.join(', ');
    const how = 'read them with read_process_messages {message_ids} or receive_process_messages first';
    throw new LibosError(
      'interrupted_by_message',
      `${call.toolName} was not run: ${call.pid} has ${interrupts.count} unread interrupt message(s) (${ids}); ${how}`,
      {
        details: { pid: call.pid, phase: 'before_tool_call', delivery: 'interrupt', ...interrupts },
      },
    );
  },
  async notices(call): Promise<readonly ToolNotice[]> {
    if (MESSAGE_TOOLS.has(call.toolName)) return [];
    const unread = await unreadOf(call.deps.db, call.pid, 'normal');
    if (unread.count === 0) return [];
    const status = await statusOf(call);
    if (!status || !TOOL_CALLABLE_STATUSES.has(status)) return [];
    return [
      {
        kind: 'message_notice',
        phase: 'after_tool_call',
        unread: unread.count,
        message_ids: unread.message_ids,
        channels: unread.channels,
        correlation_ids: unread.correlation_ids,
        message: `${unread.count} unread message(s): read them with receive_process_messages or read_process_messages before you exit`,
      },
    ];
  },
};
