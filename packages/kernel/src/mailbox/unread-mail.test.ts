import { afterEach, describe, expect, it } from 'vitest';
import { kernelMigrations } from '../store/kernel-schema.js';
import { migrate } from '../store/migrate.js';
import { openSqliteStore, type OpenedStore } from '../store/sqlite/open-sqlite.js';
import { ackMessages, insertMessage, unreadSummary } from './messages.js';
import { unreadByDelivery, unreadOf } from './unread-mail.js';

const stores: OpenedStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

const PID = 'pid_0000000000000001';

async function mailbox(): Promise<OpenedStore> {
  const s = openSqliteStore(':memory:');
  stores.push(s);
  await migrate(s.db, [{ owner: '@libos/kernel', migrations: kernelMigrations }], () => new Date(0).toISOString());
  const normal: string[] = [];
  for (let i = 0; i < 23; i++) {
    const m = await insertMessage(
      s.db,
      {
        recipientPid: PID,
        sender: 'human:owner',
        channel: i % 3 ? 'a' : 'b',
        ...(i % 2 ? { correlationId: `c${i % 4}` } : {}),
        payload: { i },
      },
      new Date(i).toISOString(),
    );
    normal.push(m.message_id);
  }
  for (let i = 0; i < 2; i++)
    await insertMessage(
      s.db,
      { recipientPid: PID, sender: 'human:owner', delivery: 'interrupt', channel: 'x', payload: {} },
      new Date(50 + i).toISOString(),
    );
  await insertMessage(s.db, { recipientPid: 'pid_0000000000000002', sender: 'human:owner', payload: {} }, new Date(60).toISOString());
  await ackMessages(s.db, [normal[0]!, normal[5]!], new Date(99).toISOString());
  return s;
}

describe('unread mail in one query', () => {
  it('unreadOf and unreadByDelivery say what unreadSummary says (count, the oldest 20 ids, channels, correlation ids)', async () => {
    const s = await mailbox();
    const expected = { normal: await unreadSummary(s.db, PID, 'normal'), interrupt: await unreadSummary(s.db, PID, 'interrupt') };
    expect(expected.normal.count).toBe(21);
    expect(expected.normal.message_ids).toHaveLength(20);
    expect(expected.interrupt.count).toBe(2);
    expect(await unreadOf(s.db, PID, 'normal')).toEqual(expected.normal);
    expect(await unreadOf(s.db, PID, 'interrupt')).toEqual(expected.interrupt);
    expect(await unreadByDelivery(s.db, PID)).toEqual(expected);
  });

  it('an empty mailbox is a zero count with no ids', async () => {
    const s = await mailbox();
    const empty = { count: 0, message_ids: [], channels: [], correlation_ids: [] };
    expect(await unreadOf(s.db, 'pid_0000000000000009', 'normal')).toEqual(empty);
    expect(await unreadByDelivery(s.db, 'pid_0000000000000009')).toEqual({ normal: empty, interrupt: empty });
  });
});
