// Long file: one scenario's stories over one shared harness; split, each file would repeat the setup.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@libos/kernel';
import { TASK_STATUSES, type TaskInfo } from '@libos/tasks';
import { afterEach, describe, expect, it } from 'vitest';
import { fails, ok, type Json } from './support/kernel-harness.js';
import { failInserts } from './support/store-faults.js';
import { creatorWithOwner, drive, openTaskHarness, TASK_IMAGE, type TaskHarness } from './support/tasks-harness.js';

// ObjectTasks against the real kernel (docs/behaviour/object-tasks.md; tests are titled with its OT ids).
// A runner is a child of its creator that carries its one saved call from birth; `drive` runs the scheduler, which
// resumes that call without a model call. Creators are driven by hand (rt.call) and idle through model turns.

let h: TaskHarness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'libos-tasks-'));
  dirs.push(dir);
  return join(dir, 'libos.db');
}

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

async function taskRows(rt: Runtime): Promise<number> {
  return rt.transaction(async (scope) =>
    Number(
      (
        (await (scope.store as Json)
          .selectFrom('object_tasks')
          .select((eb: Json) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()) as Json
      ).n,
    ),
  );
}

/** Whether `pid` may `right` the resource (host decision, nothing spent). */
async function may(rt: Runtime, pid: string, resource: string, right: string): Promise<boolean> {
  return rt.transaction(async (scope) => (await rt.authority.authorize(scope, pid, resource, right as never)).allowed);
}

describe('start_object_task: admission', () => {
  it('[OT-1] queues a visible call with a runner, a default notification to the creator and no watch', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'get_current_time', args: {} });
    expect(t).toMatchObject({
      owner_oid: owner,
      creator_pid: pid,
      tool: 'get_current_time',
      status: 'queued',
      result_oid: null,
      error: null,
      wait: {},
      started_at: null,
      completed_at: null,
    });
    expect(t.task_id).toMatch(/^task_[0-9a-f]{16}$/);
    expect(t.runner_pid).toMatch(/^pid_/);
    expect(t.notification).toEqual({
      recipient_pid: pid,
      kind: 'normal',
      channel: 'object-task',
      subject: null,
      message_id: null,
      status: 'none',
      error: null,
    });
    expect(t.owner_watch).toEqual({ enabled: false, events: ['updated', 'linked'], kind: 'normal', channel: 'object-task-owner' });
    expect(TASK_STATUSES).toContain(t.status);
  });

  it('[OT-2] refuses a start without an owner, leaving no runner and no row', async () => {
    const { rt } = await open();
    const { pid } = await creatorWithOwner(rt);
    const before = (await rt.processes()).length;
    const e = await fails(rt, pid, 'start_object_task', { tool: 'get_current_time' });
    expect(e).toMatchObject({ code: 'invalid_arguments', details: { field: 'owner_oid' } });
    expect(e.message).toMatch(/^owner_oid: /);
    expect(await fails(rt, pid, 'start_object_task', { owner_oid: '  ', owner_name: '', tool: 'get_current_time' })).toMatchObject({
      code: 'invalid_arguments',
    });
    expect((await rt.processes()).length).toBe(before);
    expect(await taskRows(rt)).toBe(0);
  });

  it('[OT-3] a non-empty owner_oid wins over a bogus owner_name; owner_name alone resolves in the process scope', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    expect((await start(rt, pid, { owner_oid: owner, owner_name: 'no-such-object', tool: 'get_current_time' })).owner_oid).toBe(owner);
    expect((await start(rt, pid, { owner_name: 'owner', tool: 'get_current_time' })).owner_oid).toBe(owner);
  });

  it('[OT-61] owner_name resolves in the given namespace; a name absent from the process scope is object_not_found', async () => {
    const { rt } = await open();
    const { pid } = await creatorWithOwner(rt);
    await rt.grant(pid, 'object_namespace:ns', ['read', 'write']);
    await ok(rt, pid, 'create_memory_namespace', { namespace: 'ns' });
    const o2 = (await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'n', namespace: 'ns', payload: {}, immutable: false })).oid;
    expect((await start(rt, pid, { owner_name: 'n', namespace: 'ns', tool: 'get_current_time' })).owner_oid).toBe(o2);
    const e = await fails(rt, pid, 'start_object_task', { owner_name: 'n', tool: 'get_current_time' });
    expect(e).toMatchObject({ code: 'object_not_found', details: { field: 'owner_name' } });
  });

  it('[OT-4] an immutable owner lacks write; an owner with read and write but no link is refused too', async () => {
    const { rt } = await open();
    const { pid } = await creatorWithOwner(rt);
    const frozen = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'frozen', payload: {} });
    const e1 = await fails(rt, pid, 'start_object_task', { owner_oid: frozen.oid, tool: 'get_current_time' });
    expect(e1).toMatchObject({ code: 'object_denied', details: { field: 'owner_oid', missing_right: 'write' } });
    expect(e1.message).toContain('write');
    // A stranger with read+write (no link) on someone else's owner.
    const other = await creatorWithOwner(rt, 'other');
    await rt.grant(pid, `object:${other.owner}`, ['read', 'write']);
    const e2 = await fails(rt, pid, 'start_object_task', { owner_oid: other.owner, tool: 'get_current_time' });
    expect(e2).toMatchObject({ code: 'object_denied', details: { missing_right: 'link' } });
    expect(await taskRows(rt)).toBe(0);
  });

  it('[OT-5] refuses a tool outside the creator table, an unknown tool and a blank tool name', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    expect(await fails(rt, pid, 'start_object_task', { owner_oid: owner, tool: 'tt_hidden' })).toMatchObject({
      code: 'tool_not_in_process_table',
      details: { field: 'tool' },
    });
    expect(await fails(rt, pid, 'start_object_task', { owner_oid: owner, tool: 'no_such_tool' })).toMatchObject({
      code: 'tool_not_found',
      details: { field: 'tool' },
    });
    expect(await fails(rt, pid, 'start_object_task', { owner_oid: owner, tool: '  ' })).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'tool' },
    });
    expect(await taskRows(rt)).toBe(0);
  });

  it('[OT-6] refuses an unknown notify kind, an unknown watch event and a 129-character channel', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const base = { owner_oid: owner, tool: 'get_current_time' };
    expect(await fails(rt, pid, 'start_object_task', { ...base, notify_kind: 'urgent' })).toMatchObject({
      code: 'invalid_arguments',
      details: { fields: ['notify_kind'] },
    });
    expect(await fails(rt, pid, 'start_object_task', { ...base, watch_events: ['deleted'] })).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'watch_events' },
    });
    expect(await fails(rt, pid, 'start_object_task', { ...base, notify_channel: 'c'.repeat(129) })).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'notify_channel' },
    });
    expect(await fails(rt, pid, 'start_object_task', { ...base, watch_channel: ' ' })).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'watch_channel' },
    });
    expect((await start(rt, pid, { ...base, notify_channel: 'c'.repeat(128) })).notification.channel).toBe('c'.repeat(128));
  });

  it(`[OT-7] notify_pid must be self, parent or a live direct child: a sibling, an exited child and an unknown pid are \
refused`, async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const base = { owner_oid: owner, tool: 'get_current_time' };
    const parent = await rt.spawn({ goal: 'parent', image: TASK_IMAGE });
    const sibling = await rt.spawn({ goal: 'sibling', image: TASK_IMAGE, parentPid: parent.pid });
    const child = await rt.spawn({ goal: 'child', image: TASK_IMAGE, parentPid: pid });
    await rt.signal(child.pid, 'terminate');
    expect(await fails(rt, pid, 'start_object_task', { ...base, notify_pid: sibling.pid })).toMatchObject({
      code: 'permission_denied',
      details: { field: 'notify_pid' },
    });
    expect(await fails(rt, pid, 'start_object_task', { ...base, notify_pid: child.pid })).toMatchObject({
      code: 'invalid_state',
      details: { field: 'notify_pid' },
    });
    expect(await fails(rt, pid, 'start_object_task', { ...base, notify_pid: 'pid_00000000000000ff' })).toMatchObject({
      code: 'process_not_found',
      details: { field: 'notify_pid' },
    });
    expect(await taskRows(rt)).toBe(0);
  });

  it('[OT-8] without process:spawn write the start is refused: no process, no row', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt, 'no-spawn', { spawn: false });
    const before = (await rt.processes()).length;
    const e = await fails(rt, pid, 'start_object_task', { owner_oid: owner, tool: 'get_current_time' });
    expect(e).toMatchObject({ code: 'permission_denied' });
    expect(e.message).toContain('process:spawn');
    expect((await rt.processes()).length).toBe(before);
    expect(await taskRows(rt)).toBe(0);
  });

  it('[OT-9] [OT-10] capacity counts active tasks (waiting ones too), per owner and globally', async () => {
    const { rt } = await open({ tasks: { limits: { maxActive: 2, maxActivePerOwner: 1 } } });
    const { pid, owner } = await creatorWithOwner(rt);
    const o2 = (await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'o2', payload: {}, immutable: false })).oid;
    const o3 = (await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'o3', payload: {}, immutable: false })).oid;
    const t1 = await start(rt, pid, { owner_oid: owner, tool: 'receive_process_messages', args: { block: true, channel: 'never' } });
    await drive(rt);
    expect((await get(rt, pid, t1.task_id)).status).toBe('waiting_message');
    const perOwner = await fails(rt, pid, 'start_object_task', { owner_oid: owner, tool: 'get_current_time' });
    expect(perOwner).toMatchObject({ code: 'task_capacity_exceeded', details: { scope: 'owner', limit: 1 } });
    await start(rt, pid, { owner_oid: o2, tool: 'receive_process_messages', args: { block: true, channel: 'never' } });
    const global = await fails(rt, pid, 'start_object_task', { owner_oid: o3, tool: 'get_current_time' });
    expect(global).toMatchObject({ code: 'task_capacity_exceeded', details: { scope: 'global', limit: 2 } });
    // A settled task frees its slot.
    await ok(rt, pid, 'cancel_object_task', { task_id: t1.task_id });
    await start(rt, pid, { owner_oid: o3, tool: 'get_current_time' });
  });

  it('[OT-11] two concurrent starts under a per-owner cap of 1 admit exactly one task and one runner', async () => {
    const { rt } = await open({ tasks: { limits: { maxActivePerOwner: 1 } } });
    const { pid, owner } = await creatorWithOwner(rt);
    const before = (await rt.processes()).length;
    const [a, b] = await Promise.all([
      rt.call(pid, 'start_object_task', { owner_oid: owner, tool: 'get_current_time' }),
      rt.call(pid, 'start_object_task', { owner_oid: owner, tool: 'get_current_time' }),
    ]);
    expect([a.ok, b.ok].filter(Boolean)).toHaveLength(1);
    expect([a, b].find((r) => !r.ok)).toMatchObject({ error: { code: 'task_capacity_exceeded' } });
    expect(await taskRows(rt)).toBe(1);
    expect((await rt.processes()).length).toBe(before + 1);
  });

  // Checked at admission, not by the runner after a queued start: arguments are never stored, so a start that cannot
  // run would only leave a runner and a row bound to fail (docs/behaviour/object-tasks.md says why).
  it(`[OT-12] args that violate the target schema refuse the start naming args.<field>; no runner, row or event; the target never \
runs`, async () => {
    const { rt, targets } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const before = (await rt.processes()).length;
    const e = await fails(rt, pid, 'start_object_task', { owner_oid: owner, tool: 'tt_echo', args: { text: 42 } });
    expect(e).toMatchObject({ code: 'invalid_arguments', details: { fields: ['args.text'] } });
    expect(e.message).toMatch(/^args: /);
    expect(await fails(rt, pid, 'start_object_task', { owner_oid: owner, tool: 'tt_echo', args: 'text' })).toMatchObject({
      code: 'invalid_arguments',
      details: { fields: ['args'] },
    });
    await drive(rt);
    expect(targets.runs).toEqual([]);
    expect((await rt.processes()).length).toBe(before);
    expect(await taskRows(rt)).toBe(0);
    expect((await rt.events()).filter((e) => e.type === 'object_task_started')).toEqual([]);
  });

  it('[OT-13] a watch channel alone enables the watch with the default events', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'get_current_time', owner_watch: false, watch_channel: 'x' });
    expect(t.owner_watch).toEqual({ enabled: true, events: ['updated', 'linked'], kind: 'normal', channel: 'x' });
    const t2 = await start(rt, pid, { owner_oid: owner, tool: 'get_current_time', watch_events: ['LINKED', 'linked'] });
    expect(t2.owner_watch).toEqual({ enabled: true, events: ['linked'], kind: 'normal', channel: 'object-task-owner' });
  });

  it('[OT-62] a finite owner grant is spent by a start; with the budget exhausted the start fails and the use stays', async () => {
    const { rt } = await open();
    const a = await creatorWithOwner(rt, 'a');
    const b = await rt.spawn({ goal: 'b', image: TASK_IMAGE });
    await rt.grant(b.pid, 'process:spawn', ['write']);
    const cap = await rt.grant(b.pid, `object:${a.owner}`, ['read', 'write', 'link'], { uses: 1 });
    await start(rt, b.pid, { owner_oid: a.owner, tool: 'get_current_time' });
    expect((await rt.capabilities(b.pid, { includeInactive: true })).find((c) => c.id === cap.id)?.usesRemaining).toBe(0);

    // A fresh one-use grant, but no child_processes budget left for the runner.
    const poor = await rt.spawn({ goal: 'poor', image: TASK_IMAGE, budget: { child_processes: 0 } });
    await rt.grant(poor.pid, 'process:spawn', ['write']);
    const cap2 = await rt.grant(poor.pid, `object:${a.owner}`, ['read', 'write', 'link'], { uses: 1 });
    const before = (await rt.processes()).length;
    const e = await fails(rt, poor.pid, 'start_object_task', { owner_oid: a.owner, tool: 'get_current_time' });
    expect(e).toMatchObject({ code: 'resource_limit_exceeded' });
    expect((await rt.capabilities(poor.pid)).find((c) => c.id === cap2.id)?.usesRemaining).toBe(1);
    expect((await rt.processes()).length).toBe(before);
    expect(await taskRows(rt)).toBe(1);
  });

  it('[OT-63] a delegation the creator cannot make, or a malformed one, refuses the start with nothing left behind', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    await rt.grant(pid, 'file:held', ['write'], { delegable: false });
    const before = (await rt.processes()).length;
    const base = { owner_oid: owner, tool: 'tt_write', args: { key: 'held' } };
    expect(
      await fails(rt, pid, 'start_object_task', { ...base, inherit_capabilities: [{ resource: 'file:held', rights: ['write'] }] }),
    ).toMatchObject({ code: 'delegation_denied' });
    expect(
      await fails(rt, pid, 'start_object_task', { ...base, inherit_capabilities: [{ resource: 'file:absent', rights: ['write'] }] }),
    ).toMatchObject({ code: 'delegation_denied' });
    const bad = await fails(rt, pid, 'start_object_task', { ...base, inherit_capabilities: [{ resource: 'file:held', rights: ['fly'] }] });
    expect(['rights_invalid', 'capability_invalid', 'invalid_arguments']).toContain(bad.code);
    expect((await rt.processes()).length).toBe(before);
    expect(await taskRows(rt)).toBe(0);
  });

  it('[OT-76] the same start twice makes two tasks with two runners; the owner list shows both', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const a = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'same' } });
    const b = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'same' } });
    expect(a.task_id).not.toBe(b.task_id);
    expect(a.runner_pid).not.toBe(b.runner_pid);
    const listed = (await ok(rt, pid, 'list_object_tasks', { owner_oid: owner })).tasks.map((t: TaskInfo) => t.task_id);
    expect(listed.sort()).toEqual([a.task_id, b.task_id].sort());
  });
});

describe('the runner', () => {
  it(`[OT-14] [OT-60] is a child of the creator with exactly the target tool, read/materialize on the owner, and its saved \
call`, async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'hi' } });
    const runner = await rt.process(t.runner_pid!);
    expect(runner.parentPid).toBe(pid);
    expect(runner.toolTable).toEqual(['tt_echo']);
    expect(runner.visibleTools).toEqual(['tt_echo']);
    expect(JSON.parse(runner.goal)).toEqual({ type: 'object_task', task_id: t.task_id, owner_oid: owner, tool: 'tt_echo' });
    const saved = await rt.transaction(async (scope) =>
      (scope.store as Json).selectFrom('pending_actions').selectAll().where('pid', '=', t.runner_pid).executeTakeFirst(),
    );
    expect(JSON.parse(saved.wait)).toEqual({ kind: 'tool', operation_id: t.task_id });
    expect(JSON.parse(saved.args)).toEqual({ text: 'hi' });
    expect(await may(rt, t.runner_pid!, `object:${owner}`, 'read')).toBe(true);
    expect(await may(rt, t.runner_pid!, `object:${owner}`, 'materialize')).toBe(true);
    expect(await may(rt, t.runner_pid!, `object:${owner}`, 'write')).toBe(false);
    expect(await may(rt, t.runner_pid!, 'process:spawn', 'write')).toBe(false);
    // The scheduler resumes the call; no model is ever asked for the runner.
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('succeeded');
    expect(await rt.llmCalls({ pid: t.runner_pid! })).toEqual([]);
    expect((await rt.process(t.runner_pid!)).status).toBe('exited');
  });

  it('[OT-59] activating the Skill adds exactly the six task tools; no table holds a publish/claim/lease/heartbeat tool', async () => {
    const { rt } = await open();
    const p = await rt.spawn({ goal: 'base' });
    const before = new Set((await rt.process(p.pid)).visibleTools);
    await rt.activateSkill(p.pid, 'agent-libos-object-tasks');
    const added = (await rt.process(p.pid)).visibleTools.filter((t) => !before.has(t));
    expect(added.sort()).toEqual([
      'cancel_object_task',
      'get_object_task',
      'list_object_tasks',
      'start_object_task',
      'wait_object_task',
      'watch_object_task_owner',
    ]);
    expect(rt.skillCatalog().find((s) => s.skillId === 'agent-libos-object-tasks')?.tools).toEqual([
      'start_object_task',
      'get_object_task',
      'list_object_tasks',
      'wait_object_task',
      'watch_object_task_owner',
      'cancel_object_task',
    ]);
    const { pid, owner } = await creatorWithOwner(rt);
    await start(rt, pid, { owner_oid: owner, tool: 'get_current_time' });
    for (const proc of await rt.processes()) expect(proc.toolTable.filter((t) => /publish|claim|lease|heartbeat/.test(t))).toEqual([]);
    expect(rt.toolNames().filter((t) => /publish|claim|lease|heartbeat/.test(t))).toEqual([]);
  });

  it('[OT-15] a tool needing authority the runner lacks fails; with an exact inherited spec it succeeds', async () => {
    const { rt, targets } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    await rt.grant(pid, 'file:k', ['write'], { delegable: true });
    const bare = await start(rt, pid, { owner_oid: owner, tool: 'tt_write', args: { key: 'k' } });
    await drive(rt);
    const failed = await get(rt, pid, bare.task_id);
    expect(failed).toMatchObject({ status: 'failed', result_oid: null });
    expect(failed.error).toMatch(/^permission_denied: /);
    expect(targets.files.has('k')).toBe(false);
    const delegated = await start(rt, pid, {
      owner_oid: owner,
      tool: 'tt_write',
      args: { key: 'k' },
      inherit_capabilities: [{ resource: 'file:k', rights: ['write'] }],
    });
    await drive(rt);
    expect((await get(rt, pid, delegated.task_id)).status).toBe('succeeded');
    expect(targets.files.get('k')).toBe('x');
  });
});

describe('results and notifications', () => {
  it('[OT-16] success publishes an immutable tool_result owned by the task; the creator can read it and has a root', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'hello' } });
    await drive(rt);
    const done = await get(rt, pid, t.task_id);
    expect(done).toMatchObject({ status: 'succeeded', error: null });
    expect(done.result_oid).toMatch(/^obj_/);
    expect(done.started_at).not.toBeNull();
    expect(done.completed_at).not.toBeNull();
    const meta = await rt.transaction(async (scope) => (scope.service('objects') as Json).inspect(done.result_oid));
    expect(meta).toMatchObject({
      type: 'tool_result',
      immutable: true,
      ownerKind: 'object_task',
      ownerId: t.task_id,
      namespace: `process:${pid}/tool_results`,
      name: `object_task_result:${t.task_id}`,
    });
    const read = await ok(rt, pid, 'read_memory_object', {
      namespace: `process:${pid}/tool_results`,
      name: `object_task_result:${t.task_id}`,
    });
    expect(read.payload).toMatchObject({ task_id: t.task_id, owner_oid: owner, tool_name: 'tt_echo', result: { text: 'hello', run: 1 } });
    for (const right of ['read', 'materialize', 'link']) expect(await may(rt, pid, `object:${done.result_oid}`, right)).toBe(true);
    expect(await may(rt, pid, `object:${done.result_oid}`, 'grant')).toBe(false);
    const roots = await rt.transaction(async (scope) => (scope.service('objects') as Json).viewRoots(pid));
    expect(roots.map((r: Json) => r.oid)).toContain(done.result_oid);
    expect((await rt.process(t.runner_pid!)).outcome).toEqual({ kind: 'exited', result_oid: done.result_oid });
  });

  it('[OT-17] events run started → running → completed, and the creator gets one correlated message; notification delivered', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'ev' } });
    await drive(rt);
    const types = (await rt.events({})).map((e) => e.type).filter((x) => x.startsWith('object_task_'));
    expect(types).toEqual(['object_task_started', 'object_task_running', 'object_task_completed']);
    const done = await get(rt, pid, t.task_id);
    const msgs = (await rt.messages(pid)).filter((m) => m.correlationId === t.task_id);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({
      sender: `object_task:${t.task_id}`,
      channel: 'object-task',
      delivery: 'normal',
      subject: 'Object task succeeded: tt_echo',
      payload: { type: 'object_task', phase: 'completed', task_id: t.task_id, status: 'succeeded', result_oid: done.result_oid },
    });
    expect(done.notification).toMatchObject({
      recipient_pid: pid,
      status: 'delivered',
      message_id: msgs[0]!.messageId,
      error: null,
      subject: 'Object task succeeded: tt_echo',
    });
  });

  it(`[OT-18] [OT-19] an interrupt notification to a child wakes its blocked receive; the child cannot read the result, the creator \
can`, async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const child = await rt.spawn({ goal: 'listener', image: TASK_IMAGE, parentPid: pid });
    const parked = await rt.call(child.pid, 'receive_process_messages', { block: true, channel: 'object-task' });
    expect(parked).toMatchObject({ ok: true, wait: { kind: 'message' } });
    const t = await start(rt, pid, {
      owner_oid: owner,
      tool: 'tt_echo',
      args: { text: 'x' },
      notify_pid: child.pid,
      notify_kind: 'interrupt',
    });
    await drive(rt, 2);
    const done = await get(rt, pid, t.task_id);
    expect(done.status).toBe('succeeded');
    const msg = (await rt.messages(child.pid)).find((m) => m.correlationId === t.task_id);
    expect(msg).toMatchObject({ delivery: 'interrupt', payload: { result_oid: done.result_oid } });
    expect((await rt.process(child.pid)).status).not.toBe('waiting_event');
    expect(await may(rt, child.pid, `object:${done.result_oid}`, 'read')).toBe(false);
    expect(await may(rt, pid, `object:${done.result_oid}`, 'read')).toBe(true);
  });

  it('[OT-64] a child may notify its parent; the parent of its parent is unrelated', async () => {
    const { rt } = await open();
    const p = await creatorWithOwner(rt, 'p');
    const c = await creatorWithOwner(rt, 'c', { parentPid: p.pid });
    const t = await start(rt, c.pid, { owner_oid: c.owner, tool: 'tt_echo', args: { text: 'up' }, notify_pid: p.pid });
    await drive(rt);
    expect((await rt.messages(p.pid)).filter((m) => m.correlationId === t.task_id)).toHaveLength(1);
    const g = await creatorWithOwner(rt, 'g', { parentPid: c.pid });
    expect(await fails(rt, g.pid, 'start_object_task', { owner_oid: g.owner, tool: 'get_current_time', notify_pid: p.pid })).toMatchObject({
      code: 'permission_denied',
      details: { field: 'notify_pid' },
    });
  });

  it(`[OT-20] [OT-66] grant_result_to_notify spends the creator grant for another recipient; without one the task fails with nothing \
left`, async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const child = await rt.spawn({ goal: 'reader', image: TASK_IMAGE, parentPid: pid });
    const cap = await rt.grant(pid, 'object:*', ['grant'], { uses: 1 });
    const t = await start(rt, pid, {
      owner_oid: owner,
      tool: 'tt_echo',
      args: { text: 'for-child' },
      notify_pid: child.pid,
      grant_result_to_notify: true,
    });
    await drive(rt);
    const done = await get(rt, pid, t.task_id);
    expect(done.status).toBe('succeeded');
    expect(await may(rt, child.pid, `object:${done.result_oid}`, 'read')).toBe(true);
    expect((await rt.capabilities(pid, { includeInactive: true })).find((c) => c.id === cap.id)?.usesRemaining).toBe(0);

    const again = await start(rt, pid, {
      owner_oid: owner,
      tool: 'tt_echo',
      args: { text: 'again' },
      notify_pid: child.pid,
      grant_result_to_notify: true,
    });
    await drive(rt);
    const refused = await get(rt, pid, again.task_id);
    expect(refused).toMatchObject({ status: 'failed', result_oid: null });
    expect(refused.error).toContain('cannot grant object task result');
    const leftovers = await rt.transaction(async (scope) =>
      (scope.service('objects') as Json).listObjects({ namespace: `process:${pid}/tool_results` }),
    );
    expect(leftovers.filter((o: Json) => o.name === `object_task_result:${again.task_id}`)).toEqual([]);

    // Notifying the creator itself needs no grant and adds no handle.
    const self = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'self' }, grant_result_to_notify: true });
    await drive(rt);
    expect((await get(rt, pid, self.task_id)).status).toBe('succeeded');
  });

  it(`[OT-22] [OT-47] the creator may exit while its task is active; the task still succeeds and its notification is \
undelivered_terminal`, async () => {
    const { rt, targets } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const scratch = await ok(rt, pid, 'create_memory_object', { type: 'observation', name: 'scratch', payload: 1 });
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'after-exit' } });
    await ok(rt, pid, 'process_exit', { message: 'done' });
    expect((await rt.process(pid)).status).toBe('exited');
    expect((await rt.process(t.runner_pid!)).status).toBe('runnable');
    // The root's exit released its memory, except the owner the active task pins, and its exit result.
    const describe = (oid: string) => rt.transaction(async (scope) => (scope.service('objects') as Json).describe(oid));
    const resultOid = ((await rt.process(pid)).outcome as Json).result_oid as string;
    expect(await describe(scratch.oid)).toBeNull();
    expect(await describe(owner)).toMatchObject({ oid: owner, ownerId: pid });
    await drive(rt);
    expect(targets.runs).toEqual(['tt_echo:after-exit']);
    const row = await rt.transaction(async (scope) =>
      (scope.store as Json).selectFrom('object_tasks').selectAll().where('task_id', '=', t.task_id).executeTakeFirst(),
    );
    expect(row.status).toBe('succeeded');
    expect(JSON.parse(row.notification)).toMatchObject({ status: 'undelivered_terminal', message_id: null });
    expect((await rt.messages(pid)).filter((m) => m.correlationId === t.task_id)).toEqual([]);
    // Once the task ended with its creator terminal, the owner is no longer pinned: released. The creator's exit
    // result (a process_result) and the task's result (owned by the task) are kept.
    expect(await describe(owner)).toBeNull();
    expect(await describe(resultOid)).toMatchObject({ oid: resultOid, ownerKind: 'process_result', ownerId: pid });
    expect(await describe(row.result_oid)).toMatchObject({ ownerKind: 'object_task', ownerId: t.task_id });
  });

  it('[OT-23] [OT-67] a terminal post that throws is retried by get: exactly one delivered message', async () => {
    // The first message post fails before its row is written (a store fault injected from outside the plugin).
    let failures = 1;
    const { rt } = await open({
      kyselyPlugins: [failInserts('process_messages', () => (failures-- > 0 ? new Error('post exploded') : null))],
    });
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'retry' } });
    await drive(rt);
    const row = await rt.transaction(async (scope) =>
      (scope.store as Json).selectFrom('object_tasks').select('notification').where('task_id', '=', t.task_id).executeTakeFirst(),
    );
    expect(JSON.parse(row.notification)).toMatchObject({ status: 'failed', error: 'Error: post exploded' });
    const after = await get(rt, pid, t.task_id);
    const msgs = (await rt.messages(pid)).filter((m) => m.correlationId === t.task_id);
    expect(msgs).toHaveLength(1);
    expect(after.notification).toMatchObject({ status: 'delivered', message_id: msgs[0]!.messageId, error: null });
    await get(rt, pid, t.task_id);
    expect((await rt.messages(pid)).filter((m) => m.correlationId === t.task_id)).toHaveLength(1);
  });

  it('[OT-17] a failing target leaves the task failed with the tool error, the runner failed and a failed-phase message', async () => {
    const { rt, targets } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_fail', args: { why: 'nope' } });
    await drive(rt);
    const done = await get(rt, pid, t.task_id);
    expect(done).toMatchObject({ status: 'failed', result_oid: null, error: 'conflict: tt_fail: nope' });
    expect(done.completed_at).not.toBeNull();
    expect(targets.runs).toEqual(['tt_fail:nope']);
    expect(await rt.process(t.runner_pid!)).toMatchObject({ status: 'failed', outcome: { kind: 'failed', code: 'conflict' } });
    const msg = (await rt.messages(pid)).find((m) => m.correlationId === t.task_id);
    expect(msg).toMatchObject({
      subject: 'Object task failed: tt_fail',
      body: 'conflict: tt_fail: nope',
      payload: { phase: 'failed', status: 'failed' },
    });
  });
});

describe('waits', () => {
  it('[OT-26] timeout_s out of range is refused; wait(0) on a queued task answers at once', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'get_current_time' });
    for (const bad of [-1, 61, true, Number.NaN, Number.POSITIVE_INFINITY, '1']) {
      expect(await fails(rt, pid, 'wait_object_task', { task_id: t.task_id, timeout_s: bad })).toMatchObject({ code: 'invalid_arguments' });
    }
    const r = await rt.call(pid, 'wait_object_task', { task_id: t.task_id, timeout_s: 0 });
    expect(r).toMatchObject({ ok: true, payload: { task: { task_id: t.task_id, status: 'queued' } } });
    expect((r as Json).wait).toBeUndefined();
  });

  it('[OT-70] wait without timeout_s parks the caller until the task settles, then returns succeeded', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'w' } });
    const parked = await rt.call(pid, 'wait_object_task', { task_id: t.task_id });
    expect(parked).toMatchObject({ ok: true, payload: null, wait: { kind: 'task', task_id: t.task_id } });
    expect((await rt.process(pid)).status).toBe('waiting_event');
    const report = await drive(rt, 2);
    expect(report.results.map((q) => [q.pid, q.kind])).toEqual([
      [t.runner_pid, 'resumed'],
      [pid, 'resumed'],
    ]);
    expect(report.results[1]!.results[0]).toMatchObject({ ok: true, tool: 'wait_object_task', payload: { task: { status: 'succeeded' } } });
  });

  it('[OT-25] a wait that times out returns the active snapshot without cancelling; a later wait sees it succeed', async () => {
    const { rt, clock } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'slow' } });
    await rt.signal(t.runner_pid!, 'pause');
    const parked = await rt.call(pid, 'wait_object_task', { task_id: t.task_id, timeout_s: 0.05 });
    expect(parked).toMatchObject({
      wait: { kind: 'task', task_id: t.task_id, deadline: new Date(clock.now().getTime() + 50).toISOString() },
    });
    clock.advance(50);
    // Nothing is runnable: the scheduler wakes the waiter at its deadline.
    const report = await drive(rt, 1);
    expect(report.results[0]!.results[0]).toMatchObject({ ok: true, payload: { task: { status: 'queued' } } });
    expect((await get(rt, pid, t.task_id)).status).toBe('queued');
    await rt.signal(t.runner_pid!, 'resume');
    await drive(rt);
    expect((await ok(rt, pid, 'wait_object_task', { task_id: t.task_id, timeout_s: 0 })).task.status).toBe('succeeded');
  });

  it('[OT-27] [OT-28] a receive target waits in waiting_message; a non-matching post leaves it, a matching one completes it', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'receive_process_messages', args: { block: true, channel: 'never' } });
    await drive(rt);
    const waiting = await get(rt, pid, t.task_id);
    expect(waiting).toMatchObject({ status: 'waiting_message', wait: { filters: { channel: 'never' } } });
    expect(await rt.process(t.runner_pid!)).toMatchObject({
      status: 'waiting_event',
      waitState: { kind: 'message', filters: { channel: 'never' } },
    });
    // wait returns at once for a task that waits on something.
    expect((await ok(rt, pid, 'wait_object_task', { task_id: t.task_id, timeout_s: 30 })).task.status).toBe('waiting_message');
    const phase = (await rt.messages(pid)).find((m) => m.correlationId === t.task_id);
    expect(phase).toMatchObject({ payload: { phase: 'waiting', status: 'waiting_message' } });

    await ok(rt, pid, 'send_process_message', { to_pid: t.runner_pid, payload: { n: 1 }, channel: 'other' });
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('waiting_message');
    const sent = await ok(rt, pid, 'send_process_message', { to_pid: t.runner_pid, payload: { n: 2 }, channel: 'never' });
    expect((await get(rt, pid, t.task_id)).status).toBe('running');
    await drive(rt);
    const done = await get(rt, pid, t.task_id);
    expect(done.status).toBe('succeeded');
    const result = await ok(rt, pid, 'read_memory_object', {
      namespace: `process:${pid}/tool_results`,
      name: `object_task_result:${t.task_id}`,
    });
    expect(result.payload.result.messages.map((m: Json) => m.message_id)).toEqual([sent.message_id]);
  });

  it('[OT-29] with two waiting runners, a post to one resumes only that task', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const a = await start(rt, pid, { owner_oid: owner, tool: 'receive_process_messages', args: { block: true, channel: 'go' } });
    const b = await start(rt, pid, { owner_oid: owner, tool: 'receive_process_messages', args: { block: true, channel: 'go' } });
    await drive(rt);
    await ok(rt, pid, 'send_process_message', { to_pid: a.runner_pid, payload: {}, channel: 'go' });
    await drive(rt);
    expect((await get(rt, pid, a.task_id)).status).toBe('succeeded');
    expect((await get(rt, pid, b.task_id)).status).toBe('waiting_message');
  });

  it(`[OT-32] a runner waiting on a human: waiting_human with its request; approval completes it, a rejected question fails \
it`, async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    await rt.grant(pid, 'human:owner', ['write'], { delegable: true });
    const q = await start(rt, pid, {
      owner_oid: owner,
      tool: 'ask_human',
      args: { question: 'Proceed?' },
      inherit_capabilities: [{ resource: 'human:owner', rights: ['write'] }],
    });
    await drive(rt);
    const waiting = await get(rt, pid, q.task_id);
    expect(waiting.status).toBe('waiting_human');
    const requestId = waiting.wait.request_id as string;
    expect((await rt.humanRequests({ status: 'pending' })).map((r) => r.id)).toEqual([requestId]);
    await rt.answerHuman(requestId, { approved: true, answer: 'yes' });
    expect((await get(rt, pid, q.task_id)).status).toBe('running');
    await drive(rt);
    const done = await get(rt, pid, q.task_id);
    expect(done.status).toBe('succeeded');
    const result = await ok(rt, pid, 'read_memory_object', {
      namespace: `process:${pid}/tool_results`,
      name: `object_task_result:${q.task_id}`,
    });
    expect(result.payload.result).toMatchObject({ request_id: requestId, status: 'approved', answer: 'yes' });

    const r = await start(rt, pid, {
      owner_oid: owner,
      tool: 'ask_human',
      args: { question: 'Again?' },
      inherit_capabilities: [{ resource: 'human:owner', rights: ['write'] }],
    });
    await drive(rt);
    const rid = (await get(rt, pid, r.task_id)).wait.request_id as string;
    await rt.answerHuman(rid, { approved: false });
    await drive(rt);
    const rejected = await get(rt, pid, r.task_id);
    expect(rejected.status).toBe('failed');
    expect(rejected.error).toContain(rid);
  });

  it('[OT-75] a rejected request_permission resumes and succeeds with status rejected; no capability is granted', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    await rt.grant(pid, 'human:owner', ['write'], { delegable: true });
    const t = await start(rt, pid, {
      owner_oid: owner,
      tool: 'request_permission',
      args: { resource: 'note:x', rights: ['read'], reason: 'test' },
      inherit_capabilities: [{ resource: 'human:owner', rights: ['write'] }],
    });
    await drive(rt);
    const waiting = await get(rt, pid, t.task_id);
    expect(waiting.status).toBe('waiting_human');
    await rt.answerHuman(waiting.wait.request_id as string, { approved: false, decision: 'always_deny' });
    await drive(rt);
    const done = await get(rt, pid, t.task_id);
    expect(done.status).toBe('succeeded');
    const result = await ok(rt, pid, 'read_memory_object', {
      namespace: `process:${pid}/tool_results`,
      name: `object_task_result:${t.task_id}`,
    });
    expect(result.payload.result).toMatchObject({ status: 'rejected' });
    expect(await may(rt, t.runner_pid!, 'note:x', 'read')).toBe(false);
    expect(await may(rt, pid, 'note:x', 'read')).toBe(false);
  });
});

describe('get, list, cancel and watch', () => {
  it('[OT-33] [OT-34] get: unknown id is task_not_found; a stranger needs owner read, and a one-use grant pays once', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'g' } });
    expect(await fails(rt, pid, 'get_object_task', { task_id: 'task_00000000000000ff' })).toMatchObject({
      code: 'task_not_found',
      details: { field: 'task_id' },
    });
    const stranger = await rt.spawn({ goal: 'stranger', image: TASK_IMAGE });
    expect(await fails(rt, stranger.pid, 'get_object_task', { task_id: t.task_id })).toMatchObject({
      code: 'object_denied',
      details: { missing_right: 'read' },
    });
    const cap = await rt.grant(stranger.pid, `object:${owner}`, ['read'], { uses: 1 });
    expect((await get(rt, stranger.pid, t.task_id)).task_id).toBe(t.task_id);
    expect((await rt.capabilities(stranger.pid, { includeInactive: true })).find((c) => c.id === cap.id)?.usesRemaining).toBe(0);
    expect(await fails(rt, stranger.pid, 'get_object_task', { task_id: t.task_id })).toMatchObject({ code: 'object_denied' });
  });

  it('[OT-35] [OT-36] list: a child sees only its own task; limits are checked; include_terminal and owner_oid filter', async () => {
    const { rt } = await open();
    const p = await creatorWithOwner(rt, 'p');
    const c = await creatorWithOwner(rt, 'c', { parentPid: p.pid });
    const childTask = await start(rt, c.pid, { owner_oid: c.owner, tool: 'tt_echo', args: { text: 'child' } });
    const parentTask = await start(rt, p.pid, {
      owner_oid: p.owner,
      tool: 'receive_process_messages',
      args: { block: true, channel: 'never' },
    });
    expect((await ok(rt, c.pid, 'list_object_tasks', { limit: 1 })).tasks.map((t: TaskInfo) => t.task_id)).toEqual([childTask.task_id]);
    for (const limit of [-1, 1001, true, 1.5])
      expect(await fails(rt, p.pid, 'list_object_tasks', { limit })).toMatchObject({
        code: 'invalid_arguments',
        details: { fields: ['limit'] },
      });
    expect((await ok(rt, p.pid, 'list_object_tasks', { limit: 0 })).tasks).toEqual([]);
    const done = await start(rt, p.pid, { owner_oid: p.owner, tool: 'tt_echo', args: { text: 'done' } });
    await drive(rt);
    expect((await get(rt, p.pid, done.task_id)).status).toBe('succeeded');
    const all = (await ok(rt, p.pid, 'list_object_tasks', {})).tasks.map((t: TaskInfo) => t.task_id);
    expect(all.sort()).toEqual([parentTask.task_id, done.task_id].sort());
    expect((await ok(rt, p.pid, 'list_object_tasks', { include_terminal: false })).tasks.map((t: TaskInfo) => t.task_id)).toEqual([
      parentTask.task_id,
    ]);
    const other = (await ok(rt, p.pid, 'create_memory_object', { type: 'plan', name: 'other', payload: {}, immutable: false })).oid;
    expect((await ok(rt, p.pid, 'list_object_tasks', { owner_oid: other })).tasks).toEqual([]);
  });

  it('[OT-71] [OT-72] a stranger with a one-use owner read lists finished and active tasks once; a page has no cursor', async () => {
    const { rt, clock } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const finished = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'fin' } });
    await drive(rt);
    clock.advance(1000);
    const active = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'act' } });
    const stranger = await rt.spawn({ goal: 'stranger', image: TASK_IMAGE });
    await rt.grant(stranger.pid, `object:${owner}`, ['read'], { uses: 1 });
    const seen = await ok(rt, stranger.pid, 'list_object_tasks', {});
    expect(seen.tasks.map((t: TaskInfo) => t.task_id)).toEqual([active.task_id, finished.task_id]);
    expect((await ok(rt, stranger.pid, 'list_object_tasks', {})).tasks).toEqual([]);
    const page = await ok(rt, pid, 'list_object_tasks', { limit: 1 });
    expect(Object.keys(page)).toEqual(['tasks']);
    expect(page.tasks).toHaveLength(1);
  });

  it('[OT-37] cancelling a waiting task: cancelled with the reason, runner killed, a cancelled-phase message', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'receive_process_messages', args: { block: true, channel: 'never' } });
    await drive(rt);
    const c = (await ok(rt, pid, 'cancel_object_task', { task_id: t.task_id, reason: 'r' })).task;
    expect(c).toMatchObject({ status: 'cancelled', error: 'r' });
    expect(c.completed_at).not.toBeNull();
    expect(await rt.process(t.runner_pid!)).toMatchObject({ status: 'killed', outcome: { kind: 'killed', code: 'cancelled' } });
    const msg = (await rt.messages(pid)).filter((m) => m.correlationId === t.task_id).pop();
    expect(msg).toMatchObject({ subject: 'Object task cancelled: receive_process_messages', body: 'r', payload: { phase: 'cancelled' } });
  });

  it('[OT-38] cancelling a succeeded task returns it unchanged and posts nothing', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'c' } });
    await drive(rt);
    const before = await get(rt, pid, t.task_id);
    const messages = (await rt.messages(pid)).length;
    expect((await ok(rt, pid, 'cancel_object_task', { task_id: t.task_id })).task).toEqual(before);
    expect((await rt.messages(pid)).length).toBe(messages);
  });

  it('[OT-40] a stranger with a one-use owner write cancels one task; the next is refused', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t1 = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: '1' } });
    const t2 = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: '2' } });
    const stranger = await rt.spawn({ goal: 'stranger', image: TASK_IMAGE });
    const cap = await rt.grant(stranger.pid, `object:${owner}`, ['write'], { uses: 1 });
    expect((await ok(rt, stranger.pid, 'cancel_object_task', { task_id: t1.task_id })).task.status).toBe('cancelled');
    expect((await rt.capabilities(stranger.pid, { includeInactive: true })).find((c) => c.id === cap.id)?.usesRemaining).toBe(0);
    expect(await fails(rt, stranger.pid, 'cancel_object_task', { task_id: t2.task_id })).toMatchObject({
      code: 'object_denied',
      details: { missing_right: 'write' },
    });
  });

  it('[OT-42] [OT-68] a runner killed from outside leaves its task cancelled; wait(0) shows it at once', async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'k' } });
    await rt.signal(t.runner_pid!, 'terminate', 'operator');
    const w = await ok(rt, pid, 'wait_object_task', { task_id: t.task_id, timeout_s: 0 });
    expect(w.task).toMatchObject({ status: 'cancelled', error: 'operator' });
    const listed = (await ok(rt, pid, 'list_object_tasks', {})).tasks.find((x: TaskInfo) => x.task_id === t.task_id);
    expect(listed.status).toBe('cancelled');
  });

  it('[OT-74] cancelling a task whose tool already wrote and then waits: cancelled, and the write stays', async () => {
    const { rt, targets } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_write_then_wait', args: { key: 'F' } });
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('waiting_message');
    expect((await ok(rt, pid, 'cancel_object_task', { task_id: t.task_id })).task.status).toBe('cancelled');
    expect(targets.files.get('F')).toBe('written');
    expect(targets.runs).toEqual(['tt_write_then_wait:F']);
  });

  it(`[OT-45] [OT-46] [OT-73] watch: validated, kept on empty changes, refused when terminal or for a stranger; status \
untouched`, async () => {
    const { rt, targets } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_write_then_wait', args: { key: 'w' } });
    await drive(rt);
    const before = await get(rt, pid, t.task_id);
    expect(await fails(rt, pid, 'watch_object_task_owner', { task_id: t.task_id, watch_events: ['deleted'] })).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'watch_events' },
    });
    expect((await get(rt, pid, t.task_id)).owner_watch).toEqual(before.owner_watch);
    const changed = (await ok(rt, pid, 'watch_object_task_owner', { task_id: t.task_id, watch_events: ['linked'], watch_channel: 'c' }))
      .task;
    expect(changed.owner_watch).toEqual({ enabled: true, events: ['linked'], kind: 'normal', channel: 'c' });
    expect(changed).toMatchObject({ status: before.status, runner_pid: before.runner_pid, started_at: before.started_at });
    const kept = (await ok(rt, pid, 'watch_object_task_owner', { task_id: t.task_id, watch_events: [], watch_kind: 'interrupt' })).task;
    expect(kept.owner_watch).toEqual({ enabled: true, events: ['linked'], kind: 'interrupt', channel: 'c' });
    expect(targets.runs).toEqual(['tt_write_then_wait:w']);
    expect(await may(rt, t.runner_pid!, `object:${owner}`, 'write')).toBe(false);
    const stranger = await rt.spawn({ goal: 'stranger', image: TASK_IMAGE });
    expect(await fails(rt, stranger.pid, 'watch_object_task_owner', { task_id: t.task_id })).toMatchObject({ code: 'object_denied' });
    await ok(rt, pid, 'cancel_object_task', { task_id: t.task_id });
    expect(await fails(rt, pid, 'watch_object_task_owner', { task_id: t.task_id, enabled: false })).toMatchObject({
      code: 'invalid_state',
      details: { field: 'task_id' },
    });
  });
});

describe('reopen (a real SQLite file)', () => {
  it('[OT-48] an active task is abandoned at reopen and its runner ends', async () => {
    const path = dbFile();
    const first = await open({ path });
    const { pid, owner } = await creatorWithOwner(first.rt);
    const t = await start(first.rt, pid, { owner_oid: owner, tool: 'receive_process_messages', args: { block: true, channel: 'never' } });
    const queued = await start(first.rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'never-run' } });
    await first.rt.signal(queued.runner_pid!, 'pause');
    await drive(first.rt);
    expect((await get(first.rt, pid, t.task_id)).status).toBe('waiting_message');
    // A stop without shutdown (as a crash): a shutdown would cancel the tasks instead (OT-51).
    await first.rt.close({ shutdown: false });

    const second = await open({ path, idStart: 10_000 });
    for (const id of [t.task_id, queued.task_id]) {
      const after = await get(second.rt, pid, id);
      expect(after).toMatchObject({ status: 'abandoned', error: 'runtime reopened before object task completed' });
      expect(after.completed_at).not.toBeNull();
      expect((await second.rt.process(after.runner_pid!)).status).toBe('killed');
    }
    await drive(second.rt);
    expect(second.targets.runs).toEqual([]);
  });

  it('[OT-49] a succeeded task whose result payload did not survive becomes result_unavailable_after_reopen, once', async () => {
    const path = dbFile();
    const first = await open({ path });
    const { pid, owner } = await creatorWithOwner(first.rt);
    const t = await start(first.rt, pid, { owner_oid: owner, tool: 'tt_echo', args: { text: 'lost' } });
    await drive(first.rt);
    const done = await get(first.rt, pid, t.task_id);
    expect(done.status).toBe('succeeded');
    await first.rt.close();

    const second = await open({ path, idStart: 10_000 });
    const after = await get(second.rt, pid, t.task_id);
    expect(after).toMatchObject({ status: 'result_unavailable_after_reopen', result_oid: null, completed_at: done.completed_at });
    expect(after.error).toMatch(/^result unavailable after runtime reopen/);
    expect(after.wait).toMatchObject({
      result_unavailable_after_reopen: true,
      previous_status: 'succeeded',
      previous_result_oid: done.result_oid,
      previous_error: null,
    });
    await second.rt.close();
    h = undefined;

    const third = await open({ path, idStart: 20_000 });
    expect(await get(third.rt, pid, t.task_id)).toEqual(after);
  });

  it('[OT-78] reopen keeps a failed task as it was, abandons the active one, stores no arguments and re-runs nothing', async () => {
    const path = dbFile();
    const first = await open({ path });
    const { pid, owner } = await creatorWithOwner(first.rt);
    await first.rt.grant(pid, 'file:secret-key', ['write'], { delegable: true });
    const failed = await start(first.rt, pid, { owner_oid: owner, tool: 'tt_fail', args: { why: 'first' }, owner_watch: true });
    await drive(first.rt);
    const failedBefore = await get(first.rt, pid, failed.task_id);
    expect(failedBefore).toMatchObject({ status: 'failed', notification: { status: 'delivered' } });
    const active = await start(first.rt, pid, {
      owner_oid: owner,
      tool: 'tt_write',
      args: { key: 'secret-key', text: 'ARG-MARKER' },
      inherit_capabilities: [{ resource: 'file:secret-key', rights: ['write'] }],
      grant_result_to_notify: true,
    });
    await first.rt.signal(active.runner_pid!, 'pause');
    await first.rt.close({ shutdown: false });

    const second = await open({ path, idStart: 10_000 });
    expect(await get(second.rt, pid, failed.task_id)).toEqual(failedBefore);
    expect((await get(second.rt, pid, active.task_id)).status).toBe('abandoned');
    const rows = await second.rt.transaction(async (scope) => (scope.store as Json).selectFrom('object_tasks').selectAll().execute());
    const columns = [
      'completed_at',
      'created_at',
      'error',
      'notification',
      'notify_retry',
      'owner_oid',
      'owner_watch',
      'creator_pid',
      'result_oid',
    ];
    expect(Object.keys(rows[0]).sort()).toEqual(
      [...columns, 'runner_pid', 'seq', 'started_at', 'status', 'task_id', 'tool', 'tool_id', 'updated_at', 'wait'].sort(),
    );
    expect(JSON.stringify(rows)).not.toContain('ARG-MARKER');
    expect(JSON.stringify(rows)).not.toContain('inherit');
    await drive(second.rt);
    expect(second.targets.runs).toEqual([]);
    expect(second.targets.files.size).toBe(0);
  });
});

describe('owner watch', () => {
  it(`[OT-43] a watching runner blocked in receive on the watch channel completes with the change notice, which holds no owner \
data`, async () => {
    const { rt } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    await ok(rt, pid, 'append_memory_object', { name: 'owner', entry: { secret: 'OWNER-CONTENT' } });
    const t = await start(rt, pid, {
      owner_oid: owner,
      tool: 'receive_process_messages',
      args: { block: true, channel: 'object-task-owner' },
      owner_watch: true,
    });
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('waiting_message');
    await ok(rt, pid, 'append_memory_object', { name: 'owner', entry: { n: 2 } });
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('succeeded');
    const notice = (await rt.messages(t.runner_pid!)).find((m) => m.sender === `object_task_owner_watch:${t.task_id}`);
    expect(notice).toMatchObject({
      channel: 'object-task-owner',
      correlationId: t.task_id,
      subject: `Object owner updated: ${owner}`,
      payload: {
        type: 'object_task_owner_change',
        task_id: t.task_id,
        owner_oid: owner,
        event: 'updated',
        version: 3,
        change: { operation: 'append', list_field: 'entries', length: 2 },
      },
    });
    expect(JSON.stringify(notice)).not.toContain('OWNER-CONTENT');
    const result = await ok(rt, pid, 'read_memory_object', {
      namespace: `process:${pid}/tool_results`,
      name: `object_task_result:${t.task_id}`,
    });
    expect(result.payload.result.messages.map((m: Json) => m.message_id)).toEqual([notice!.messageId]);
  });

  it(`[OT-31] [OT-45] a notice to a runner waiting on another channel leaves it waiting (the call ran once); a disabled watch sends \
nothing`, async () => {
    const { rt, targets } = await open();
    const { pid, owner } = await creatorWithOwner(rt);
    const t = await start(rt, pid, { owner_oid: owner, tool: 'tt_write_then_wait', args: { key: 'k' }, owner_watch: true });
    await drive(rt);
    await ok(rt, pid, 'append_memory_object', { name: 'owner', entry: 1 });
    await drive(rt);
    expect((await get(rt, pid, t.task_id)).status).toBe('waiting_message');
    expect((await rt.messages(t.runner_pid!)).filter((m) => m.sender === `object_task_owner_watch:${t.task_id}`)).toHaveLength(1);
    expect(targets.runs).toEqual(['tt_write_then_wait:k']);
    await ok(rt, pid, 'watch_object_task_owner', { task_id: t.task_id, enabled: false });
    await ok(rt, pid, 'append_memory_object', { name: 'owner', entry: 2 });
    expect((await rt.messages(t.runner_pid!)).filter((m) => m.sender === `object_task_owner_watch:${t.task_id}`)).toHaveLength(1);
    // A task without a watch hears nothing either.
    const quiet = await start(rt, pid, { owner_oid: owner, tool: 'tt_write_then_wait', args: { key: 'q' } });
    await drive(rt);
    await ok(rt, pid, 'append_memory_object', { name: 'owner', entry: 3 });
    expect(await rt.messages(quiet.runner_pid!)).toEqual([]);
  });
});
