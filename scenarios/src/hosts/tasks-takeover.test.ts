// A tree taken over carries its plugins' recovery (issue 15, K-15.14): the ObjectTasks of a host that stopped had their
// runners there, so the host taking the tree over abandons them, as a reopen abandons every active task.
import { afterAll, describe, expect, it } from 'vitest';
import type { TaskInfo } from '@libos/tasks';
import { ok } from '../support/kernel-harness.js';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';
import { creatorWithOwner, drive, openTaskHarness, type TaskHarness } from '../support/tasks-harness.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_tasktake');

describe.skipIf(unavailable !== null)('[K-15.14] plugin recovery of a tree taken over', () => {
  const opened: TaskHarness[] = [];
  afterAll(async () => {
    for (const h of opened) await h.rt.close().catch(() => undefined);
    await dropSchema(schema);
  });

  it('[K-15.14] the active task of a stopped host is abandoned by the host that takes its tree over; its runner ends', async () => {
    const dies = await openTaskHarness({ path: url, host: { id: 'dies', leaseMs: 1000 } });
    opened.push(dies);
    const { pid, owner } = await creatorWithOwner(dies.rt);
    const get = async (h: TaskHarness, id: string): Promise<TaskInfo> => (await ok(h.rt, pid, 'get_object_task', { task_id: id })).task;
    const t: TaskInfo = (
      await ok(dies.rt, pid, 'start_object_task', {
        owner_oid: owner,
        tool: 'receive_process_messages',
        args: { block: true, channel: 'never' },
      })
    ).task;
    await drive(dies.rt);
    expect((await get(dies, t.task_id)).status).toBe('waiting_message');
    // Stopped as a crash: no close hook, its leases left to run out.
    await dies.rt.close({ shutdown: false });

    // A longer lease than the dead host's: its liveness window (two lease periods) still sees `dies`, so no store-wide sweep.
    const survivor = await openTaskHarness({ path: url, host: { id: 'survivor', leaseMs: 5000 }, idStart: 10_000 });
    opened.push(survivor);
    expect((await get(survivor, t.task_id)).status).toBe('waiting_message');
    const end = Date.now() + 10_000;
    while ((await get(survivor, t.task_id)).status !== 'abandoned') {
      if (Date.now() > end) throw new Error('the tree was not taken over');
      await drive(survivor.rt);
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await get(survivor, t.task_id);
    expect(after).toMatchObject({ status: 'abandoned', error: 'its host stopped before object task completed' });
    expect((await survivor.rt.process(after.runner_pid!)).status).toBe('killed');
    const audit = await survivor.rt.audit({ action: 'host.tree_taken_over' });
    expect(audit.map((a) => a.details)).toEqual([expect.objectContaining({ root: pid, host: 'survivor', previous_host: 'dies' })]);
    expect((await survivor.rt.audit({ action: 'object_task.takeover_abandoned' }))[0]?.details).toMatchObject({ task_ids: [t.task_id] });
  });
});
