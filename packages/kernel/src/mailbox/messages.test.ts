import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kernelStores } from '../internal/testing/kernel-store.js';
import { ackMessages, insertMessage, messageMatches, queryMessages, type MailFilters, type ProcessMessage } from './messages.js';
import { unreadOf } from './unread-mail.js';

// The wake predicate (`messageMatches`, run when a message is posted) and the receive query (`queryMessages`, run
// when the saved receive resumes) must agree: a post that wakes a waiter must be found by its resumed call, and a
// message the receive would return must wake it (else a wake-up is lost).

const store = kernelStores();

const PID = 'pid_0000000000000001';
const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const newMessage = fc.record({
  sender: pick(['pid_0000000000000002', 'human:owner', 'human:ops']),
  channel: fc.option(pick(['default', 'work', 'human']), { nil: undefined }),
  kind: pick(['message', 'note']),
  correlationId: fc.option(pick(['c1', 'c2']), { nil: undefined }),
  replyTo: fc.option(pick(['r1', 'r2']), { nil: undefined }),
  acked: fc.boolean(),
});
/** A filter; `message_ids` as indexes into the inserted messages (-1: an id that does not exist). */
const filter = fc.record(
  {
    sender_pid: pick(['pid_0000000000000002', 'human:owner', 'human:ops']),
    channel: pick(['default', 'work', 'human']),
    kind: pick(['message', 'note']),
    correlation_id: pick(['c1', 'c2']),
    reply_to: pick(['r1', 'r2']),
    message_ids: fc.uniqueArray(fc.integer({ min: -1, max: 11 }), { maxLength: 4 }),
  },
  { requiredKeys: [] },
);

describe('mailbox queries', () => {
  it('a message matches a filter in memory exactly when the query returns it; omitted counts the rest', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(newMessage, { maxLength: 12 }),
        fc.array(filter, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 12 }),
        async (msgs, rawFilters, limit) => {
          const s = await store();
          const all: ProcessMessage[] = [];
          for (const m of msgs) {
            all.push(
              await insertMessage(
                s.db,
                {
                  recipientPid: PID,
                  sender: m.sender,
                  ...(m.channel ? { channel: m.channel } : {}),
                  kind: m.kind,
                  ...(m.correlationId ? { correlationId: m.correlationId } : {}),
                  ...(m.replyTo ? { replyTo: m.replyTo } : {}),
                  payload: {},
                },
                new Date(0).toISOString(),
              ),
            );
          }
          await ackMessages(
            s.db,
            all.filter((_, i) => msgs[i]!.acked).map((m) => m.message_id),
            new Date(1).toISOString(),
          );
          const ackedIds = new Set(all.filter((_, i) => msgs[i]!.acked).map((m) => m.message_id));
          const filters: MailFilters[] = rawFilters.map(({ message_ids, ...rest }) => ({
            ...rest,
            ...(message_ids ? { message_ids: message_ids.map((i) => all[i]?.message_id ?? 'msg_ffffffffffffffff') } : {}),
          }));
          for (const f of filters) {
            for (const includeAcked of [false, true]) {
              const expected = all
                .filter((m) => messageMatches(m, f) && (includeAcked || !ackedIds.has(m.message_id)))
                .map((m) => m.message_id);
              const got = await queryMessages(s.db, PID, f, { includeAcked, limit });
              expect(got.messages.map((m) => m.message_id)).toEqual(expected.slice(0, limit));
              expect(got.omitted).toBe(Math.max(0, expected.length - limit));
              expect(got.hasMore).toBe(expected.length > limit);
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('message_ids [] matches nothing, in memory and in the query', async () => {
    const s = await store();
    const m = await insertMessage(s.db, { recipientPid: PID, sender: 'human:owner', payload: {} }, new Date(0).toISOString());
    expect(messageMatches(m, { message_ids: [] })).toBe(false);
    expect(await queryMessages(s.db, PID, { message_ids: [] }, { includeAcked: true, limit: 10 })).toEqual({
      messages: [],
      hasMore: false,
      omitted: 0,
    });
  });

  it('unreadOf counts unread messages of one delivery and names the oldest 20', async () => {
    const s = await store();
    const ids: string[] = [];
    for (let i = 0; i < 22; i++)
      ids.push(
        (
          await insertMessage(
            s.db,
            { recipientPid: PID, sender: 'human:owner', channel: i % 2 ? 'a' : 'b', correlationId: 'c', payload: { i } },
            new Date(i).toISOString(),
          )
        ).message_id,
      );
    await insertMessage(s.db, { recipientPid: PID, sender: 'human:owner', delivery: 'interrupt', payload: {} }, new Date(99).toISOString());
    await ackMessages(s.db, [ids[0]!], new Date(100).toISOString());
    const normal = await unreadOf(s.db, PID, 'normal');
    expect(normal).toEqual({ count: 21, message_ids: ids.slice(1, 21), channels: ['a', 'b'], correlation_ids: ['c'] });
    expect((await unreadOf(s.db, PID, 'interrupt')).count).toBe(1);
  });
});
