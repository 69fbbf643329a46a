// Long file: one scenario's stories over one shared harness; split, each file would repeat the setup.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@libos/kernel';
import type { LlmProvider } from '@libos/kernel';
import { canonicalSha256 } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { asHost, checkpointAgent, openCheckpointHarness, versions, type CheckpointHarness } from './support/checkpoints-harness.js';
import { fails, ok, type Json } from './support/kernel-harness.js';
import { drive, idleProvider } from './support/tasks-harness.js';

// Checkpoints of a process subtree against the real kernel over SQLite (docs/behaviour/checkpoints.md; titles carry
// its CP ids). Processes are driven by hand (rt.call) or by the scheduler with an idle model.

let h: CheckpointHarness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'libos-cp-'));
  dirs.push(dir);
  return join(dir, 'libos.db');
}

async function open(opts: Parameters<typeof openCheckpointHarness>[0] = {}): Promise<CheckpointHarness> {
  h = await openCheckpointHarness(opts);
  return h;
}

const count = (rt: Runtime, table: string) =>
  rt.transaction(async (scope) =>
    Number(
      (
        (await (scope.store as Json)
          .selectFrom(table)
          .select((eb: Json) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()) as Json
      ).n,
    ),
  );

/** `pid` with a mutable `ledger` holding `n` entries (versions 1 + n). */
async function withLedger(rt: Runtime, pid: string, n: number): Promise<string> {
  const { oid } = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
  for (let i = 1; i <= n; i++) await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: { n: i } });
  return oid;
}

const checkpoint = async (rt: Runtime, pid: string, label?: string) => ok(rt, pid, 'create_checkpoint', label ? { label } : {});

describe('create, list, inspect, diff', () => {
  it('[CP-1] captures the subtree in one transaction: processes, Objects with payload digests, grants and tasks', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const child = (await ok(rt, pid, 'spawn_child_process', { goal: 'child' })).pid as string;
    const ledger = await withLedger(rt, pid, 2);
    const cp = await checkpoint(rt, pid, 'first');
    expect(cp).toMatchObject({ owner_pid: pid, label: 'first', pids: [pid, child] });
    expect(cp.checkpoint_id).toMatch(/^ckpt_[0-9a-f]{16}$/);
    expect(cp.counts).toMatchObject({ processes: 2, objects: 3 });
    const seen = await ok(rt, pid, 'inspect_checkpoint', { checkpoint_id: cp.checkpoint_id });
    expect(seen.items.processes.map((p: Json) => [p.id, p.status])).toEqual([
      [pid, 'runnable'],
      [child, 'runnable'],
    ]);
    const read = await ok(rt, pid, 'read_memory_object', { name: 'ledger' });
    const entry = seen.items.objects.find((o: Json) => o.id === ledger);
    expect(entry).toMatchObject({ name: 'ledger', version: 3, lifecycle: 'live', payload_sha256: read.sha256 });
    expect(seen.items.grants.map((g: Json) => g.resource)).toContain(`checkpoint:process:${pid}`);
    const audit = await rt.audit({ action: 'checkpoint.create' });
    expect(audit.at(-1)).toMatchObject({ target: `checkpoint:${cp.checkpoint_id}`, decision: 'ok', actor: pid });
  });

  it('[CP-1] a concurrent append lands wholly before or wholly after the capture', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    await withLedger(rt, pid, 1);
    const [cp] = await Promise.all([checkpoint(rt, pid), ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: { n: 2 } })]);
    const seen = await ok(rt, pid, 'inspect_checkpoint', { checkpoint_id: cp.checkpoint_id });
    const entry = seen.items.objects.find((o: Json) => o.name === 'ledger');
    const entries = entry.version === 2 ? [{ n: 1 }] : [{ n: 1 }, { n: 2 }];
    expect([2, 3]).toContain(entry.version);
    // The digest is of the payload at exactly the captured version: never half of an append.
    expect(entry.payload_sha256).toBe(canonicalSha256({ entries }));
  });

  it('[CP-2] creating needs write on checkpoint:process:<pid>; without it nothing is written, and the owner gets read only', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt, 'agent', { checkpointWrite: false });
    const other = await checkpointAgent(rt, 'other');
    const before = { cps: await count(rt, 'checkpoints'), blobs: await count(rt, 'checkpoint_blobs') };
    expect((await fails(rt, pid, 'create_checkpoint', {})).code).toBe('permission_denied');
    expect((await fails(rt, other, 'create_checkpoint', { pid })).code).toBe('permission_denied');
    expect({ cps: await count(rt, 'checkpoints'), blobs: await count(rt, 'checkpoint_blobs') }).toEqual(before);
    expect(await rt.audit({ action: 'checkpoint.create' })).toEqual([]);
    await rt.grant(pid, `checkpoint:process:${pid}`, ['write']);
    const cp = await checkpoint(rt, pid);
    const may = (right: string) =>
      rt.transaction(async (scope) => (await rt.authority.authorize(scope, pid, `checkpoint:${cp.checkpoint_id}`, right as never)).allowed);
    expect({ read: await may('read'), execute: await may('execute'), admin: await may('admin'), write: await may('write') }).toEqual({
      read: true,
      execute: false,
      admin: false,
      write: false,
    });
    const grants = await rt.capabilities(pid);
    expect(grants.filter((g) => g.resource === `checkpoint:${cp.checkpoint_id}`).map((g) => [g.id, g.rights])).toEqual([
      [`cap_own:checkpoint:${cp.checkpoint_id}`, ['read']],
    ]);
  });

  it('[CP-3] a payload held by two checkpoints is stored once', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    await ok(rt, pid, 'create_memory_object', { type: 'evidence', name: 'big', payload: { blob: 'x'.repeat(5000) } });
    await checkpoint(rt, pid);
    const blobs = await count(rt, 'checkpoint_blobs');
    await checkpoint(rt, pid);
    expect(await count(rt, 'checkpoint_blobs')).toBe(blobs);
    expect(await count(rt, 'checkpoint_blob_refs')).toBe(blobs * 2);
  });

  it('[CP-4] a payload over 1,048,576 bytes, or a checkpoint over its total, is refused naming the Object; nothing written', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const big = await rt.transaction(async (scope) =>
      (scope.service('objects') as Json).createForProcess(pid, { type: 'artifact', name: 'huge', payload: 'y'.repeat(1_048_576) }),
    );
    const before = {
      cps: await count(rt, 'checkpoints'),
      blobs: await count(rt, 'checkpoint_blobs'),
      refs: await count(rt, 'checkpoint_blob_refs'),
    };
    const e = await fails(rt, pid, 'create_checkpoint', {});
    expect(e).toMatchObject({ code: 'checkpoint_too_large', details: { ref: `object:${big.oid}`, bytes: 1_048_578, maximum: 1_048_576 } });
    expect(e.message).toContain(`object:${big.oid}`);
    expect({
      cps: await count(rt, 'checkpoints'),
      blobs: await count(rt, 'checkpoint_blobs'),
      refs: await count(rt, 'checkpoint_blob_refs'),
    }).toEqual(before);
    await rt.close();

    const small = await open({ checkpoints: { limits: { maxCaptureBytes: 100, maxCheckpointBytes: 150 } } });
    const p = await checkpointAgent(small.rt);
    await ok(small.rt, p, 'create_memory_object', { type: 'evidence', name: 'a', payload: 'a'.repeat(80) });
    const b = await ok(small.rt, p, 'create_memory_object', { type: 'evidence', name: 'b', payload: 'b'.repeat(80) });
    const over = await fails(small.rt, p, 'create_checkpoint', {});
    expect(over).toMatchObject({ code: 'checkpoint_too_large', details: { ref: `object:${b.oid}`, maximum: 150 } });
    expect(await count(small.rt, 'checkpoints')).toBe(0);
  });

  it('[CP-5] list shows only what the caller may read; inspect needs read; an unknown or malformed id is refused', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const stranger = await checkpointAgent(rt, 'stranger');
    const a = await checkpoint(rt, pid, 'a');
    const b = await checkpoint(rt, pid, 'b');
    const mine = await checkpoint(rt, stranger, 'theirs');
    expect((await ok(rt, pid, 'list_checkpoints', {})).checkpoints.map((c: Json) => c.checkpoint_id)).toEqual([
      b.checkpoint_id,
      a.checkpoint_id,
    ]);
    expect((await ok(rt, stranger, 'list_checkpoints', { owner_pid: pid })).checkpoints).toEqual([]);
    expect((await fails(rt, stranger, 'inspect_checkpoint', { checkpoint_id: a.checkpoint_id })).code).toBe('permission_denied');
    expect((await fails(rt, stranger, 'diff_checkpoint', { checkpoint_id: a.checkpoint_id })).code).toBe('permission_denied');
    expect((await fails(rt, pid, 'inspect_checkpoint', { checkpoint_id: 'ckpt_00000000000000ff' })).code).toBe('checkpoint_not_found');
    expect((await fails(rt, pid, 'inspect_checkpoint', { checkpoint_id: 'nope' })).code).toBe('invalid_arguments');
    expect((await asHost(rt, (cps) => cps.list('host'))).map((c) => c.checkpoint_id)).toEqual([
      mine.checkpoint_id,
      b.checkpoint_id,
      a.checkpoint_id,
    ]);
  });

  it('[CP-6] diff shows what was added, removed and changed since, by kind, with versions', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const ledger = await withLedger(rt, pid, 1);
    const cp = await checkpoint(rt, pid);
    await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: { n: 2 } });
    const note = await ok(rt, pid, 'create_memory_object', { type: 'observation', name: 'note', payload: 'later' });
    const child = (await ok(rt, pid, 'spawn_child_process', { goal: 'later child' })).pid;
    const grant = await rt.grant(pid, 'clock:now', ['read']);
    const d = (await ok(rt, pid, 'diff_checkpoint', { checkpoint_id: cp.checkpoint_id })).changes;
    expect(d.objects.changed).toEqual([{ id: ledger, from: { version: 2 }, to: { version: 3 } }]);
    expect(d.objects.added.map((o: Json) => o.id)).toContain(note.oid);
    expect(d.processes.added.map((p: Json) => p.id)).toEqual([child]);
    expect(d.grants.added.map((g: Json) => g.id)).toContain(grant.id);
    expect(d.tasks).toEqual({ added: [], removed: [], changed: [], counts: { added: 0, removed: 0, changed: 0 } });
  });
});

describe('restore', () => {
  it('[CP-7] restoring needs admin on the checkpoint; without it nothing changes', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    await withLedger(rt, pid, 1);
    const cp = await checkpoint(rt, pid);
    await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: { n: 2 } });
    const before = await versions(rt, pid);
    expect((await fails(rt, pid, 'restore_checkpoint', { checkpoint_id: cp.checkpoint_id })).code).toBe('permission_denied');
    expect((await fails(rt, pid, 'fork_checkpoint', { checkpoint_id: cp.checkpoint_id })).code).toBe('permission_denied');
    expect(await versions(rt, pid)).toEqual(before);
    expect(await rt.audit({ action: 'checkpoint.restore' })).toEqual([]);
    expect(await count(rt, 'checkpoint_events')).toBe(0);
  });

  it('[CP-8] a restore is refused while a quantum of the subtree runs, and goes through at the next safe point', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    await withLedger(rt, pid, 1);
    const cp = await checkpoint(rt, pid);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const blocking: LlmProvider = {
      ...idleProvider,
      completeAction: async (req) => (entered(), await gate, idleProvider.completeAction(req)),
    };
    const run = rt.run({ provider: blocking, maxQuanta: 1, maxEmptyReplies: Number.POSITIVE_INFINITY });
    await inside;
    expect((await rt.process(pid)).status).toBe('running');
    const refused = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id)).catch((e) => e);
    expect(refused).toMatchObject({ code: 'invalid_state', details: { running: [pid] } });
    release();
    await run;
    const r = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id));
    expect(r.report.kernel!.restored_pids).toEqual([pid]);
  });

  it('[CP-9] a restore puts Objects, versions, payloads back, releases later ones, ends later processes, revives ended ones', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    await rt.grant(pid, 'context:enrichment', ['execute']);
    await drive(rt, 1);
    const child = (await ok(rt, pid, 'spawn_child_process', { goal: 'lives on' })).pid as string;
    await withLedger(rt, pid, 2);
    const ledgerBefore = await ok(rt, pid, 'read_memory_object', { name: 'ledger' });
    const cp = await checkpoint(rt, pid);
    const revision = (await rt.process(pid)).revision;
    const generation = await rt.transaction(async (scope) => (await (scope.service('llm_context') as Json).state(pid)).generation);
    await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: { n: 3 } });
    const risky = (await ok(rt, pid, 'create_memory_object', { type: 'observation', name: 'risky', payload: 'delete everything' })).oid;
    await ok(rt, pid, 'create_memory_namespace', { namespace: `process:${pid}/later` });
    const later = (await ok(rt, pid, 'spawn_child_process', { goal: 'born later' })).pid as string;
    await rt.signal(child, 'terminate');
    await rt.grant(pid, `checkpoint:${cp.checkpoint_id}`, ['admin']);
    const r = await ok(rt, pid, 'restore_checkpoint', { checkpoint_id: cp.checkpoint_id });
    expect(r.report.kernel.ended_pids).toEqual([later]);
    // What came since is released: the risky Object, and the later child's goal.
    expect(r.report.objects.released_objects).toEqual([risky, (await rt.process(later)).goalOid]);
    expect(r.report.objects.dropped_namespaces).toEqual([`process:${pid}/later`]);
    const ledger = await ok(rt, pid, 'read_memory_object', { name: 'ledger' });
    expect({ version: ledger.version, sha256: ledger.sha256, payload: ledger.payload }).toEqual({
      version: ledgerBefore.version,
      sha256: ledgerBefore.sha256,
      payload: { entries: [{ n: 1 }, { n: 2 }] },
    });
    expect((await fails(rt, pid, 'read_memory_object', { name: 'risky' })).code).toBe('object_not_found');
    expect((await rt.process(later)).outcome).toMatchObject({ kind: 'killed', code: 'superseded_by_restore' });
    expect((await rt.process(child)).status).toBe('runnable');
    expect((await rt.process(pid)).revision).toBeGreaterThan(revision);
    const after = await rt.transaction(async (scope) => (await (scope.service('llm_context') as Json).state(pid)).generation);
    expect(after).not.toBe(generation);
    // A restored child charges its budget again: its account is open.
    await ok(rt, child, 'list_memory_namespace', {});
  });

  it('[CP-10] audit, events, LLM calls and human history only grow; the restore appends its own', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    await withLedger(rt, pid, 1);
    await drive(rt, 1);
    const cp = await checkpoint(rt, pid);
    await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: { n: 2 } });
    await rt.grant(pid, 'human:owner', ['write']);
    await rt.grant(pid, 'skill:agent-libos-child-processes', ['execute']);
    await drive(rt, 1);
    const before = { audit: await rt.audit(), events: await rt.events(), llm: await rt.llmCalls({ pid }), human: await rt.humanRequests() };
    await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id));
    const after = { audit: await rt.audit(), events: await rt.events(), llm: await rt.llmCalls({ pid }), human: await rt.humanRequests() };
    expect(after.audit.slice(0, before.audit.length)).toEqual(before.audit);
    expect(after.events.slice(0, before.events.length)).toEqual(before.events);
    expect(after.llm).toEqual(before.llm);
    expect(after.human.map((x) => x.id)).toEqual(before.human.map((x) => x.id));
    expect(after.audit.slice(before.audit.length).map((a) => a.action)).toContain('checkpoint.restore');
    expect(after.events.slice(before.events.length).map((e) => e.type)).toContain('checkpoint_restored');
    expect(await count(rt, 'checkpoints')).toBe(1);
  });

  it('[CP-11] grants: one issued since is revoked, one revoked since stays revoked, spent finite uses are not refunded', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const finite = await rt.grant(pid, 'file:f', ['write'], { uses: 3 });
    const revoked = await rt.grant(pid, 'clock:now', ['read']);
    const cp = await checkpoint(rt, pid);
    await ok(rt, pid, 'tt_write', { key: 'f', text: '1' });
    await rt.revoke(revoked.id);
    const later = await rt.grant(pid, 'clock:sleep', ['read']);
    await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id));
    const all = await rt.capabilities(pid, { includeInactive: true });
    const byId = (id: string) => all.find((g) => g.id === id)!;
    expect(byId(finite.id)).toMatchObject({ status: 'active', usesRemaining: 2 });
    expect(byId(revoked.id).status).toBe('revoked');
    expect(byId(later.id).status).toBe('revoked');
    // The checkpoint's own read (ownership) stays: restore never revokes checkpoint rights.
    const may = await rt.transaction(
      async (scope) => (await rt.authority.authorize(scope, pid, `checkpoint:${cp.checkpoint_id}`, 'read')).allowed,
    );
    expect(may).toBe(true);
  });

  it('[CP-12] messages that came since are superseded_by_restore and no read returns them; acked ones are unread again', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const first = await rt.sendMessage(pid, { n: 1 });
    const cp = await checkpoint(rt, pid);
    await ok(rt, pid, 'read_process_messages', {});
    const second = await rt.sendMessage(pid, { n: 2 });
    const r = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id));
    expect(r.report.kernel!.superseded_messages).toEqual([second.messageId]);
    const read = await ok(rt, pid, 'read_process_messages', { include_acked: true, ack: false });
    expect(read.messages.map((m: Json) => [m.message_id, m.status])).toEqual([[first.messageId, 'unread']]);
  });

  it('[CP-13] effects outside the store since the capture are listed, never undone', async () => {
    const { rt, targets } = await open();
    const pid = await checkpointAgent(rt);
    await rt.grant(pid, 'file:report', ['write']);
    const cp = await checkpoint(rt, pid);
    await ok(rt, pid, 'tt_write', { key: 'report', text: 'sent' });
    const r = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id));
    expect(r.report.kernel!.external_effects).toEqual([expect.objectContaining({ pid, tool: 'tt_write' })]);
    expect(targets.files.get('report')).toBe('sent');
  });

  it('[OT-50] an active scoped task refuses the restore naming it; a task finished since becomes superseded_by_restore', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const owner = (await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false }))
      .oid;
    const before = await ok(rt, pid, 'start_object_task', { owner_oid: owner, tool: 'tt_echo', args: { text: 'before' } });
    await drive(rt);
    const cp = await checkpoint(rt, pid);
    const waiting = (
      await ok(rt, pid, 'start_object_task', {
        owner_oid: owner,
        tool: 'receive_process_messages',
        args: { block: true, channel: 'never' },
      })
    ).task;
    const other = (
      await ok(rt, pid, 'start_object_task', {
        owner_oid: owner,
        tool: 'receive_process_messages',
        args: { block: true, channel: 'never' },
      })
    ).task;
    await drive(rt);
    const versionsBefore = await versions(rt, pid);
    const refused = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id)).catch((e) => e);
    expect(refused).toMatchObject({ code: 'invalid_state', details: { task_ids: [waiting.task_id, other.task_id].sort() } });
    expect(refused.message).toContain(waiting.task_id);
    expect(await versions(rt, pid)).toEqual(versionsBefore);
    await ok(rt, pid, 'cancel_object_task', { task_id: waiting.task_id });
    await ok(rt, pid, 'cancel_object_task', { task_id: other.task_id });
    const r = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id));
    expect([...(r.report.tasks!.superseded_tasks as string[])].sort()).toEqual([waiting.task_id, other.task_id].sort());
    const t = (await ok(rt, pid, 'get_object_task', { task_id: waiting.task_id })).task;
    expect(t).toMatchObject({
      status: 'superseded_by_restore',
      runner_pid: null,
      result_oid: null,
      error: `superseded by checkpoint restore ${cp.checkpoint_id}`,
    });
    expect(t.wait).toMatchObject({
      superseded_by_restore: cp.checkpoint_id,
      previous_status: 'cancelled',
      previous_runner_pid: waiting.runner_pid,
    });
    expect((await ok(rt, pid, 'get_object_task', { task_id: before.task.task_id })).task.status).toBe('succeeded');
  });

  it('[OT-79] a task that wrote a file and finished after checkpoint K: superseded_by_restore when K is restored; file stays', async () => {
    const { rt, targets } = await open();
    const pid = await checkpointAgent(rt);
    await rt.grant(pid, 'file:out', ['write'], { delegable: true });
    const owner = (await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false }))
      .oid;
    const cp = await checkpoint(rt, pid);
    const t = (
      await ok(rt, pid, 'start_object_task', {
        owner_oid: owner,
        tool: 'tt_write',
        args: { key: 'out', text: 'F' },
        inherit_capabilities: [{ resource: 'file:out', rights: ['write'] }],
      })
    ).task;
    await drive(rt);
    expect((await ok(rt, pid, 'get_object_task', { task_id: t.task_id })).task.status).toBe('succeeded');
    const r = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id));
    expect(r.report.tasks!.superseded_tasks).toEqual([t.task_id]);
    expect((await ok(rt, pid, 'get_object_task', { task_id: t.task_id })).task.status).toBe('superseded_by_restore');
    expect(targets.files.get('out')).toBe('F');
    expect(r.report.kernel!.external_effects).toEqual([expect.objectContaining({ pid: t.runner_pid, tool: 'tt_write' })]);
  });
});

describe('reopen rehydration', () => {
  it('[CP-14] payloads lost at a reopen come back byte-identical (sha256) from their checkpoint; the audit holds all of it', async () => {
    const path = dbFile();
    const first = await open({ path });
    const pid = await checkpointAgent(first.rt);
    const payloads: Record<string, unknown> = {
      ledger: {
        entries: [
          { n: 1, text: '雪' },
          { n: 2, nested: { a: [true, null, 3] } },
        ],
      },
      text: 'plain text with "quotes" and ☃',
      number: 42,
      nothing: null,
    };
    for (const [name, payload] of Object.entries(payloads))
      await ok(first.rt, pid, 'create_memory_object', { type: 'evidence', name, payload });
    const digests: Record<string, string> = {};
    for (const name of Object.keys(payloads)) digests[name] = (await ok(first.rt, pid, 'read_memory_object', { name })).sha256;
    const cp = await checkpoint(first.rt, pid);
    const auditBefore = (await first.rt.audit()).map((a) => a.id);
    await first.rt.close();
    h = undefined;

    const second = await open({ path, idStart: 100_000 });
    for (const name of Object.keys(payloads))
      expect((await fails(second.rt, pid, 'read_memory_object', { name })).code).toBe('payload_unavailable_after_reopen');
    const r = await asHost(second.rt, (cps) => cps.restore('host', cp.checkpoint_id));
    expect((r.report.objects!.rehydrated_payloads as string[]).length).toBeGreaterThanOrEqual(5);
    for (const [name, payload] of Object.entries(payloads)) {
      const read = await ok(second.rt, pid, 'read_memory_object', { name });
      expect(read.sha256).toBe(digests[name]);
      expect(read.payload).toEqual(payload);
    }
    const audit = await second.rt.audit();
    expect(audit.map((a) => a.id).slice(0, auditBefore.length)).toEqual(auditBefore);
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['checkpoint.create', 'checkpoint.restore', 'object.checkpoint_restore']),
    );
  });

  it('[CP-14] a stored payload that no longer matches its sha256 is checkpoint_corrupt and nothing is restored', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    await withLedger(rt, pid, 1);
    const cp = await checkpoint(rt, pid);
    await ok(rt, pid, 'append_memory_object', { name: 'ledger', entry: { n: 2 } });
    await rt.transaction(async (scope) =>
      (scope.store as Json).updateTable('checkpoint_blobs').set({ content: '{"entries":[{"n":666}]}' }).execute(),
    );
    const before = await versions(rt, pid);
    const e = await asHost(rt, (cps) => cps.restore('host', cp.checkpoint_id)).catch((x) => x);
    expect(e).toMatchObject({ code: 'checkpoint_corrupt' });
    expect(await versions(rt, pid)).toEqual(before);
  });
});

describe('fork', () => {
  it('[CP-15] a fork is a new tree running on its own: new pids and oids, runnable, finite grants dropped, original intact', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const ledger = await withLedger(rt, pid, 1);
    const finite = await rt.grant(pid, 'file:f', ['write'], { uses: 2 });
    const lasting = await rt.grant(pid, 'file:g', ['write']);
    const child = (await ok(rt, pid, 'spawn_child_process', { goal: 'waiter' })).pid as string;
    await rt.grant(child, 'skill:agent-libos-child-processes', ['execute']);
    await rt.call(child, 'receive_process_messages', { block: true, channel: 'never' });
    expect((await rt.process(child)).status).toBe('waiting_event');
    const cp = await checkpoint(rt, pid);
    expect((await fails(rt, pid, 'fork_checkpoint', { checkpoint_id: cp.checkpoint_id })).code).toBe('permission_denied');
    await rt.grant(pid, `checkpoint:${cp.checkpoint_id}`, ['execute']);
    const f = await ok(rt, pid, 'fork_checkpoint', { checkpoint_id: cp.checkpoint_id });
    const root = f.root_pid as string;
    expect(root).not.toBe(pid);
    expect(f.pids).toEqual({ [pid]: root, [child]: f.pids[child] });
    const forkRoot = await rt.process(root);
    expect(forkRoot).toMatchObject({ parentPid: null, status: 'runnable', imageId: 'checkpoint-agent:v0' });
    expect((await rt.process(f.pids[child])).status).toBe('runnable');
    const grants = await rt.capabilities(root);
    expect(grants.map((g) => g.resource)).toContain('file:g');
    expect(grants.map((g) => g.resource)).not.toContain('file:f');
    expect(f.report.capabilities.dropped_finite_grants).toEqual([finite.id]);
    expect(grants.find((g) => g.resource === 'file:g')!.parentCapId).toBe(lasting.id);
    // The fork's ledger is its own copy: appending to it never touches the original.
    const forked = await ok(rt, root, 'read_memory_object', { name: 'ledger' });
    expect(forked.oid).not.toBe(ledger);
    expect(forked.payload).toEqual({ entries: [{ n: 1 }] });
    await ok(rt, root, 'append_memory_object', { name: 'ledger', entry: { fork: true } });
    const original = await ok(rt, pid, 'read_memory_object', { name: 'ledger' });
    expect({ oid: original.oid, version: original.version, payload: original.payload }).toEqual({
      oid: ledger,
      version: 2,
      payload: { entries: [{ n: 1 }] },
    });
    expect((await fails(rt, root, 'append_memory_object', { namespace: `process:${pid}`, name: 'ledger', entry: 1 })).code).toMatch(
      /namespace_denied|object_not_found/,
    );
    // It runs on its own: the scheduler gives it quanta.
    const report = await drive(rt, 6);
    expect(report.results.map((q) => q.pid)).toContain(root);
  });

  it("[CAP-55.1] a fork observed what its original observed: the forked root's sources are the original's", async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const ledger = await withLedger(rt, pid, 0);
    await ok(rt, pid, 'read_memory_object', { name: 'ledger' });
    const sources = async (p: string) => (await rt.transaction((scope) => rt.authority.flow(scope, p).snapshot())).sources;
    expect(await sources(pid)).toContain(ledger);
    const cp = await checkpoint(rt, pid);
    await rt.grant(pid, `checkpoint:${cp.checkpoint_id}`, ['execute']);
    const f = await ok(rt, pid, 'fork_checkpoint', { checkpoint_id: cp.checkpoint_id });
    expect(await sources(f.root_pid as string)).toEqual(await sources(pid));
  });

  it('[OM-77.3] a fork copies provenance in full: a copied result names all it observed, not a chain into the original', async () => {
    const { rt } = await open();
    const pid = await checkpointAgent(rt);
    const create = (input: Json) =>
      rt.transaction((scope) => (scope.service('objects') as Json).createForProcess(pid, input)) as Promise<Json>;
    const notes: string[] = [];
    for (let i = 0; i < 3; i++) notes.push((await create({ type: 'observation', name: `n${i}`, payload: i, attachToView: false })).oid);
    const results: string[] = [];
    for (let i = 1; i <= 3; i++)
      results.push((await create({ type: 'tool_result', name: `r${i}`, payload: i, sourceOids: notes.slice(0, i) })).oid);
    const stored = async (oid: string) => {
      const row = (await rt.transaction((scope) =>
        (scope.store as Json).selectFrom('om_objects').select('provenance').where('oid', '=', oid).executeTakeFirstOrThrow(),
      )) as { provenance: string };
      return JSON.parse(row.provenance);
    };
    expect(await stored(results[2]!)).toMatchObject({ parent_oids: [notes[2]], parents_from: results[1] });
    const cp = await checkpoint(rt, pid);
    await rt.grant(pid, `checkpoint:${cp.checkpoint_id}`, ['execute']);
    const f = await ok(rt, pid, 'fork_checkpoint', { checkpoint_id: cp.checkpoint_id });
    const copies = f.report.objects.forked_objects as Record<string, string>;
    const copy = await stored(copies[results[2]!]!);
    expect(copy.parents_from).toBeUndefined();
    expect([...copy.parent_oids].sort()).toEqual(notes.map((n) => copies[n]).sort());
  });
});
