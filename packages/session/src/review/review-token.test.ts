import type { HumanMessage } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { acknowledgedMessagesSha256, reviewToken, type ReviewIdentity } from './review-token.js';

const msg = (id: string, status: 'unread' | 'acked', body = `body of ${id}`): HumanMessage => ({
  message_id: id,
  status,
  sender: 'human:owner',
  recipient_pid: 'pid_1',
  kind: 'message',
  channel: 'human',
  correlation_id: null,
  reply_to: null,
  subject: '',
  body,
  payload: { text: body },
});

function identity(messages: HumanMessage[], goalVersion = 1): ReviewIdentity {
  return {
    goalOid: 'obj_0000000000000001',
    goalVersion,
    humanMessages: messages,
    acknowledgedSha256: acknowledgedMessagesSha256(messages.filter((m) => m.status === 'acked')),
  };
}

describe('reviewToken', () => {
  it('is exitrev_ plus 64 hex digits, and the same identity gives the same token', () => {
    const a = reviewToken(identity([msg('msg_1', 'acked')]));
    expect(a).toMatch(/^exitrev_[0-9a-f]{64}$/);
    expect(reviewToken(identity([msg('msg_1', 'acked')]))).toBe(a);
  });

  it('changes with the goal version, a new human message, and an ACK', () => {
    const base = reviewToken(identity([msg('msg_1', 'acked')]));
    expect(reviewToken(identity([msg('msg_1', 'acked')], 2))).not.toBe(base);
    expect(reviewToken(identity([msg('msg_1', 'acked'), msg('msg_2', 'unread')]))).not.toBe(base);
    const unread = reviewToken(identity([msg('msg_1', 'acked'), msg('msg_2', 'unread')]));
    expect(reviewToken(identity([msg('msg_1', 'acked'), msg('msg_2', 'acked')]))).not.toBe(unread);
  });

  it('covers the immutable content of acked messages: a different body under the same id is a different token', () => {
    expect(reviewToken(identity([msg('msg_1', 'acked', 'one')]))).not.toBe(reviewToken(identity([msg('msg_1', 'acked', 'two')])));
  });

  it('the acked hash ignores status and unread messages are outside it', () => {
    const acked = acknowledgedMessagesSha256([msg('msg_1', 'acked')]);
    expect(acknowledgedMessagesSha256([msg('msg_1', 'unread')])).toBe(acked);
    expect(acknowledgedMessagesSha256([])).not.toBe(acked);
  });
});
