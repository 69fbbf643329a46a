import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@libos/kernel';
import type { TaskInfo } from '@libos/tasks';
import { afterEach, describe, expect, it } from 'vitest';
import { ok, type Json } from './support/kernel-harness.js';
import { failInserts } from './support/store-faults.js';
import { creatorWithOwner, drive, openTaskHarness, type TaskHarness } from './support/tasks-harness.js';

// ObjectTasks rules that rest on how transactions are cut (the call, its bookkeeping and its notification commit
// together), on Object links and on shutdown (docs/behaviour/object-tasks.md; titles carry the OT ids).

let h: TaskHarness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(opts: Parameters<typeof openTaskHarness>[0] = {}) {
  h = await openTaskHarness(opts);
  return h;
}

async function start(rt: Runtime, pid: string, args: Record<string, unknown>): Promise<TaskInfo> {
  return (await ok(rt, pid, 'start_object_task', args)).task;
}

async function get(rt: Runtime, pid: string, taskId: string): Promise<TaskInfo> {
  return (await ok(rt, pid, 'get_object_task', { task_id: taskId })).task;
}

const may = (rt: Runtime, pid: string, resource: string, right: string) =>
  rt.transaction(async (scope) => (await rt.authority.authorize(scope, pid, resource, right as never)).allowed);

const rawTask = (rt: Runtime, taskId: string) =>
  rt.transaction(
    async (scope) =>
      (await (scope.store as Json).selectFrom('object_tasks').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow()) as Json,
  );

describe('notifications commit with the task', () => {
  it('[OT-21] a requested result grant whose post fails: the task succeeds, notification failed, no handle, use unspent', async () => {
    // Every message post fails before its row is written (a store fault injected from outside the plugin).
    let fail = true;
    const { rt } = await open({ kyselyPlugins: [failInserts('process_messages', () => (fail ? new Error('post refused') : null))] });
    const { pid, owner } = await creatorWithOwner(rt);
    const child = (await ok(rt, pid, 'spawn_child_process', { goal: 'recipient' })).pid as string;
    const grant = await rt.grant(pid, 'object:*', ['grant'], { uses: 1 });
    const t = await start(rt, pid, {
      owner_oid: owner,
      tool: 'tt_echo',
      args: { text: 'g' },
      notify_pid: child,
      grant_result_to_notify: true,
    });
    await drive(rt);
    const row = await rawTask(rt, t.task_id);
    expect(row.status).toBe('succeeded');
    expect(JSON.parse(row.notification)).toMatchObject({ recipient_pid: child, status: 'failed', error: 'Error: post refused' });
    expect(await may(rt, child, `object:${row.result_oid}`, 'read')).toBe(false);
    expect((await rt.capabilities(pid)).find((g) => g.id === grant.id)!.usesRemaining).toBe(1);
    fail = false;
  });

  it('[OT-24] [OT-69] no get or wait ever sees a terminal task whose notification is still in flight', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const seen: string[] = [];
    // Every committed change of the task row is observed: the terminal status and its settled notification arrive together.
    rt.watch({
      event: (e: Json) => {
        if (typeof e.type === 'string' && e.type.startsWith('object_task_') && e.data.task_id) seen.push(e.type);
      },
    });
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'w' } });
    const parked = await rt.call(pid, 'wait_object_task', { task_id: t.task_id });
    expect(parked).toMatchObject({ ok: true, wait: { kind: 'task', task_id: t.task_id } });
    await drive(rt);
    const row = await rawTask(rt, t.task_id);
    expect(row.status).toBe('succeeded');
    expect(JSON.parse(row.notification).status).toBe('delivered');
    const after = await ok(rt, pid, 'wait_object_task', { task_id: t.task_id, timeout_s: 0 });
    expect(after.task).toMatchObject({ status: 'succeeded', notification: { status: 'delivered' } });
    expect(after.task.notification.message_id).toMatch(/^msg_/);
    expect(seen).toEqual(expect.arrayContaining(['object_task_started', 'object_task_running', 'object_task_completed']));
  });
});

describe('waits and cancels against the call transaction', () => {
  it('[OT-30] a runner waiting in wait_child_process on its child completes when the child exits', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const kid = (await ok(rt, pid, 'spawn_child_process', { goal: 'the awaited child' })).pid as string;
    const t = await start(rt, pid, { owner_oid: owner, tool: 'wait_child_process', args: { child_pid: kid } });
    // No runner may spawn (its budget admits no child), so the host moves the child under the runner: the call the
    // runner makes is then a wait on its own child.
    await rt.transaction(async (scope) => {
      await (scope.store as Json).updateTable('processes').set({ parent_pid: t.runner_pid }).where('pid', '=', kid).execute();
    });
    await drive(rt, 4);
    expect(await get(rt, pid, t.task_id)).toMatchObject({ status: 'waiting_process', wait: { child_pid: kid } });
    await ok(rt, kid, 'process_exit', { payload: { done: 1 } });
    await drive(rt, 4);
    expect((await get(rt, pid, t.task_id)).status).toBe('succeeded');
    const result = await ok(rt, pid, 'read_memory_object', {
      namespace: `process:${pid}/tool_results`,
      name: `object_task_result:${t.task_id}`,
    });
    expect(result.payload.result).toMatchObject({ child_pid: kid, status: 'exited', ready: true });
  });

  it('[OT-39] [OT-41] a cancel never lands inside a call: cancelled before it ran, or succeeded with its result', async () => {
    for (const order of ['cancel-first', 'call-first'] as const) {
      const { rt, targets } = await open();
      const { pid, owner } = await creatorWithOwner(rt);
      await rt.grant(pid, 'file:K', ['write'], { delegable: true });
      const t = await start(rt, pid, {
        owner_oid: owner,
        tool: 'tt_write',
        args: { key: 'K', text: order },
        inherit_capabilities: [{ resource: 'file:K', rights: ['write'] }],
      });
      const cancel = () => ok(rt, pid, 'cancel_object_task', { task_id: t.task_id });
      // Both race for the store; each is one transaction, so one commits wholly before the other starts.
      const [first, second] =
        order === 'cancel-first' ? await Promise.all([cancel(), drive(rt, 4)]) : await Promise.all([drive(rt, 4), cancel()]);
      void first;
      void second;
      const final = await get(rt, pid, t.task_id);
      const roots = await rt.transaction(async (scope) => (scope.service('objects') as Json).viewRoots(pid));
      if (final.status === 'cancelled') {
        expect(targets.files.has('K')).toBe(false);
        expect(final.result_oid).toBeNull();
        const results = await rt.transaction(async (scope) =>
          (scope.service('objects') as Json).listObjects({ namespace: `process:${pid}/tool_results` }).catch(() => []),
        );
        expect(results.filter((o: Json) => o.name === `object_task_result:${t.task_id}`)).toEqual([]);
      } else {
        expect(final.status).toBe('succeeded');
        expect(targets.files.get('K')).toBe(order);
        expect(roots.map((r: Json) => r.oid)).toContain(final.result_oid);
      }
      await rt.close();
      h = undefined;
    }
  });

  it('[OT-42] a runner that exits or fails on its own leaves its task failed; one killed from outside leaves it cancelled', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const ended: Record<string, TaskInfo> = {};
    for (const how of ['exited', 'failed', 'killed'] as const) {
      const t = await start(rt, pid, {
        owner_oid: owner,
        tool: 'receive_process_messages',
        args: { block: true, channel: `never-${how}` },
      });
      await drive(rt);
      const end =
        how === 'exited'
          ? { kind: 'exited', resultOid: null }
          : how === 'failed'
            ? { kind: 'failed', code: 'crashed', message: 'runner crashed' }
            : { kind: 'killed', code: 'terminated', reason: 'operator' };
      await rt.transaction(async (scope) => (scope.service('runners') as Json).end(t.runner_pid, end));
      ended[how] = await get(rt, pid, t.task_id);
    }
    expect(ended.exited).toMatchObject({ status: 'failed', error: 'object task runner ended before task completion: exited' });
    expect(ended.failed).toMatchObject({ status: 'failed', error: 'runner crashed' });
    expect(ended.killed).toMatchObject({ status: 'cancelled', error: 'operator' });
  });
});

describe('owner watch: linked', () => {
  it('[OT-44] a linked watch carries the destination and relation, and gives the runner no read on it', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const dst = (await ok(rt, pid, 'create_memory_object', { type: 'evidence', name: 'dst', payload: { secret: 'DST-CONTENT' } })).oid;
    const t = await start(rt, pid, {
      owner_oid: owner,
      tool: 'receive_process_messages',
      args: { block: true, channel: 'object-task-owner' },
      watch_events: ['linked'],
    });
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('waiting_message');
    const { link_id } = await rt.transaction(async (scope) => (scope.service('objects') as Json).link(owner, dst, 'cites'));
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('succeeded');
    const notice = (await rt.messages(t.runner_pid!)).find((m) => m.sender === `object_task_owner_watch:${t.task_id}`)!;
    expect(notice).toMatchObject({
      subject: `Object owner linked: ${owner}`,
      payload: {
        type: 'object_task_owner_change',
        event: 'linked',
        owner_oid: owner,
        dst_oid: dst,
        relation: 'cites',
        link_id,
        change: { operation: 'link' },
      },
    });
    expect(JSON.stringify(notice)).not.toContain('DST-CONTENT');
    expect(await may(rt, t.runner_pid!, `object:${dst}`, 'read')).toBe(false);
  });

  it("[OT-16] [OT-44] a task's result is linked from its owner as produced, and that link fires the task's own linked watch", async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'p' }, watch_events: ['linked'] });
    await drive(rt);
    const done = await get(rt, pid, t.task_id);
    const links = await rt.transaction(async (scope) => (scope.service('objects') as Json).linksFrom(owner));
    expect(links).toEqual([
      expect.objectContaining({
        src_oid: owner,
        dst_oid: done.result_oid,
        relation: 'produced',
        metadata: { task_id: t.task_id, tool: 'tt_echo' },
      }),
    ]);
    const notices = (await rt.messages(t.runner_pid!)).filter((m) => m.sender === `object_task_owner_watch:${t.task_id}`);
    expect(notices.map((m) => (m.payload as Json).relation)).toEqual(['produced']);
  });
});

describe('shutdown', () => {
  it('[OT-51] a runtime shutdown cancels active tasks with "runtime shutdown"; their runners end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-ot51-'));
    dirs.push(dir);
    const path = join(dir, 'libos.db');
    const first = await open({ path });
    const { pid, owner } = await creatorWithOwner(first.rt);
    const waiting = await start(first.rt, pid, {
      owner_oid: owner,
      tool: 'receive_process_messages',
      args: { block: true, channel: 'never' },
    });
    const queued = await start(first.rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'never-run' } });
    await first.rt.signal(queued.runner_pid!, 'pause');
    await drive(first.rt);
    await first.rt.close();
    h = undefined;
    const second = await open({ path, idStart: 10_000 });
    for (const t of [waiting, queued]) {
      const after = await get(second.rt, pid, t.task_id);
      expect(after).toMatchObject({ status: 'cancelled', error: 'runtime shutdown' });
      expect((await second.rt.process(t.runner_pid!)).status).toBe('killed');
    }
    expect(second.targets.runs).toEqual([]);
    expect((await second.rt.audit({ action: 'object_task.shutdown_cancelled' })).length).toBe(1);
  });
});
