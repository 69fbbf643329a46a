import { LibosError } from '@libos/sdk';
import { TERMINAL_PROCESS_STATUSES } from '../processes/process-record.js';
import { findProcess } from '../processes/process-store.js';
import { wakeIfWaiting } from '../processes/wake.js';
import { insertMessage, messageMatches, type NewMessage, type ProcessMessage } from './messages.js';
import { resources } from '@libos/sdk';
import type { KernelScope } from '../store/kernel-scope.js';

/**
 * Posts a message and, in the same transaction, wakes the recipient if it waits for a message this one matches.
 * A non-matching post leaves a waiting recipient waiting. A message from a human (`human:<name>`) without a channel
 * goes to the `human` channel.
 */
export async function postMessage(scope: KernelScope, m: NewMessage): Promise<ProcessMessage> {
  const recipient = await findProcess(scope.store, m.recipientPid);
  if (!recipient) throw new LibosError('process_not_found', `to_pid: process ${m.recipientPid} does not exist`);
  if (TERMINAL_PROCESS_STATUSES.has(recipient.status))
    throw new LibosError('invalid_state', `to_pid: process ${m.recipientPid} is ${recipient.status} and receives no messages`);
  const channel = m.channel ?? (m.sender.startsWith('human:') ? 'human' : undefined);
  const msg = await insertMessage(scope.store, { ...m, ...(channel ? { channel } : {}) }, scope.clock.now().toISOString());
  await scope.events.emit('message_posted', {
    pid: m.recipientPid,
    message_id: msg.message_id,
    sender: msg.sender,
    channel: msg.channel,
    delivery: msg.delivery,
  });
  await scope.audit.record({
    action: 'message.post',
    target: resources.process(m.recipientPid),
    decision: msg.delivery,
    details: { message_id: msg.message_id, sender: msg.sender, channel: msg.channel, kind: msg.kind, correlation_id: msg.correlation_id },
  });
  await wakeIfWaiting(
    scope,
    m.recipientPid,
    (p) => p.waitState?.kind === 'message' && messageMatches(msg, p.waitState.filters as never),
    `message ${msg.message_id}`,
  );
  return msg;
}
