import { describe, expect, it } from 'vitest';
import { kernelStores } from '../internal/testing/kernel-store.js';
import type { OpenedStore } from '../store/sqlite/open-sqlite.js';
import type { KernelStore } from '../store/kernel-database.js';
import { ackMessages, insertMessage, type Delivery } from './messages.js';
import { unreadByDelivery, unreadOf } from './unread-mail.js';

const PID = 'pid_0000000000000001';

/** The oracle: the two-query summary the kernel used before unread mail became one query. */
async function reference(db: KernelStore, pid: string, delivery: Delivery) {
  const base = db
    .selectFrom('process_messages')
    .where('recipient_pid', '=', pid)
    .where('status', '=', 'unread')
    .where('delivery', '=', delivery);
  const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await base.select(['id', 'channel', 'correlation_id']).orderBy('seq').limit(20).execute();
  const uniq = (xs: (string | null)[]) => [...new Set(xs.filter((x): x is string => x !== null))];
  return {
    count: Number(n),
    message_ids: rows.map((r) => r.id),
    channels: uniq(rows.map((r) => r.channel)),
    correlation_ids: uniq(rows.map((r) => r.correlation_id)),
  };
}

const kernelStore = kernelStores();

async function mailbox(): Promise<OpenedStore> {
  const s = await kernelStore();
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
  it(`unreadOf and unreadByDelivery say what the two-query reference says (count, the oldest 20 ids, channels, correlation \
ids)`, async () => {
    const s = await mailbox();
    const expected = { normal: await reference(s.db, PID, 'normal'), interrupt: await reference(s.db, PID, 'interrupt') };
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
