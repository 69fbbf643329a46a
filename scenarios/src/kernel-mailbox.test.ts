// Long file: one scenario's stories over one shared harness; split, each file would repeat the setup.
import { ScriptedProvider, type QuantumResult } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { commitGroups, fails, ok, openHarness, spawnProbe, type Harness, type Json } from './support/kernel-harness.js';

// The process mailbox (docs/behaviour/object-tasks.md, kernel.md): send / receive / read with ACK, blocking receives
// that park in waiting_event{message}, interrupts, notices and human messages. Tests titled OT-n are the mailbox
// rules of object-tasks.md that need no ObjectTasks; K-n are kernel.md rules.

let h: Harness | undefined;
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
});

/** A parent with two children (each a probe agent with the mailbox tools visible). */
async function family() {
  h = await openHarness();
  const { rt, probe } = h;
  const parent = await spawnProbe(rt, 'parent');
  const child = await spawnProbe(rt, 'child', parent);
  const sibling = await spawnProbe(rt, 'sibling', parent);
  return { rt, probe, parent, child, sibling };
}

const ids = (r: Json): string[] => r.messages.map((m: Json) => m.message_id);

describe('send_process_message', () => {
  it(`[OT-52] sends to self, parent and direct children; refuses a sibling, a grandparent, an exited child and a 513-char \
subject`, async () => {
    const { rt, parent, child, sibling } = await family();
    const grandchild = await spawnProbe(rt, 'grandchild', child);

    const toSelf = await ok(rt, child, 'send_process_message', { to_pid: child, payload: { n: 1 } });
    const toParent = await ok(rt, child, 'send_process_message', { to_pid: parent, payload: { n: 2 }, subject: 's'.repeat(512) });
    const toChild = await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { n: 3 }, channel: 'work' });
    expect(toParent).toMatchObject({ to_pid: parent, channel: 'default', delivery: 'normal', status: 'unread', subject: 's'.repeat(512) });
    expect((await rt.messages(child)).map((m) => [m.messageId, m.sender])).toEqual([
      [toSelf.message_id, child],
      [toChild.message_id, parent],
    ]);
    expect((await rt.messages(parent)).map((m) => [m.messageId, m.sender])).toEqual([[toParent.message_id, child]]);

    // Unrelated: a sibling, a grandparent, an unknown pid.
    expect(await fails(rt, child, 'send_process_message', { to_pid: sibling, payload: {} })).toMatchObject({ code: 'permission_denied' });
    expect(await fails(rt, grandchild, 'send_process_message', { to_pid: parent, payload: {} })).toMatchObject({
      code: 'permission_denied',
    });
    expect(await fails(rt, parent, 'send_process_message', { to_pid: 'pid_00000000000000ff', payload: {} })).toMatchObject({
      code: 'permission_denied',
    });
    expect(await rt.messages(sibling)).toEqual([]);
    expect((await rt.messages(parent)).length).toBe(1);

    // A terminal child receives nothing.
    await rt.signal(sibling, 'terminate');
    expect(await fails(rt, parent, 'send_process_message', { to_pid: sibling, payload: {} })).toMatchObject({ code: 'invalid_state' });
    expect(await rt.messages(sibling)).toEqual([]);

    // Field bounds are checked before anything runs.
    const long = await fails(rt, parent, 'send_process_message', { to_pid: child, payload: {}, subject: 's'.repeat(513) });
    expect(long).toMatchObject({ code: 'invalid_arguments', details: { fields: ['subject'] } });
    const body = await fails(rt, parent, 'send_process_message', { to_pid: child, payload: {}, body: 'b'.repeat(32_001) });
    expect(body).toMatchObject({ code: 'invalid_arguments', details: { fields: ['body'] } });
    expect((await rt.messages(child)).length).toBe(2);
  });
});

describe('read_process_messages', () => {
  it(`[OT-53] read ACKs what it returns and lists those ids; ack:false leaves them unread; include_acked returns acked ones \
too`, async () => {
    const { rt, parent, child } = await family();
    const m1 = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { n: 1 } })).message_id;
    const m2 = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { n: 2 } })).message_id;

    const peek = await ok(rt, child, 'read_process_messages', { ack: false });
    expect(peek).toMatchObject({ ready: true, acked_message_ids: [], has_more: false });
    expect(peek.messages.map((m: Json) => [m.message_id, m.status])).toEqual([
      [m1, 'unread'],
      [m2, 'unread'],
    ]);
    expect((await rt.messages(child)).map((m) => m.status)).toEqual(['unread', 'unread']);

    const taken = await ok(rt, child, 'read_process_messages', {});
    expect(taken.acked_message_ids).toEqual([m1, m2]);
    expect(taken.messages.map((m: Json) => [m.message_id, m.status, m.payload])).toEqual([
      [m1, 'acked', { n: 1 }],
      [m2, 'acked', { n: 2 }],
    ]);
    expect((await rt.messages(child)).map((m) => m.status)).toEqual(['acked', 'acked']);
    expect((await rt.messages(child)).every((m) => typeof m.ackedAt === 'string')).toBe(true);

    expect(ids(await ok(rt, child, 'read_process_messages', {}))).toEqual([]);
    const m3 = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { n: 3 } })).message_id;
    const all = await ok(rt, child, 'read_process_messages', { include_acked: true });
    expect(ids(all)).toEqual([m1, m2, m3]);
    expect(all.acked_message_ids).toEqual([m3]);
  });

  it('[OT-54] filters AND together; message_ids [] matches nothing; explicit ids return exactly those, oldest first', async () => {
    const { rt, parent, child } = await family();
    const send = async (args: Json) =>
      (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: {}, ...args })).message_id as string;
    const a = await send({ channel: 'x', correlation_id: 'c1' });
    const b = await send({ channel: 'x', correlation_id: 'c2', kind: 'note' });
    const c = await send({ channel: 'y', correlation_id: 'c1', reply_to: a });
    const own = (await ok(rt, child, 'send_process_message', { to_pid: child, payload: {}, channel: 'x', correlation_id: 'c1' }))
      .message_id;

    expect(ids(await ok(rt, child, 'read_process_messages', { channel: 'x', correlation_id: 'c1', ack: false }))).toEqual([a, own]);
    expect(
      ids(await ok(rt, child, 'read_process_messages', { channel: 'x', correlation_id: 'c1', sender_pid: parent, ack: false })),
    ).toEqual([a]);
    expect(ids(await ok(rt, child, 'read_process_messages', { channel: 'x', kind: 'note', ack: false }))).toEqual([b]);
    expect(ids(await ok(rt, child, 'read_process_messages', { reply_to: a, ack: false }))).toEqual([c]);
    const none = await ok(rt, child, 'read_process_messages', { message_ids: [] });
    expect(none).toMatchObject({ messages: [], acked_message_ids: [], has_more: false, omitted_count: 0 });
    const exact = await ok(rt, child, 'read_process_messages', { message_ids: [c, a] });
    expect(ids(exact)).toEqual([a, c]);
    expect(exact.acked_message_ids).toEqual([a, c]);
    expect((await rt.messages(child)).filter((m) => m.status === 'unread').map((m) => m.messageId)).toEqual([b, own]);
    const got = exact.messages[1];
    expect(got).toMatchObject({
      message_id: c,
      sender: parent,
      recipient_pid: child,
      channel: 'y',
      correlation_id: 'c1',
      reply_to: a,
      subject: '',
      body: '',
    });
  });

  it(`[OT-56] 105 unread, limit 100: 100 returned with has_more, omitted_count 5 and a continuation; the next read returns the last \
5`, async () => {
    const { rt, child } = await family();
    for (let i = 0; i < 105; i++) await rt.sendMessage(child, { i });
    const first = await ok(rt, child, 'read_process_messages', { limit: 100 });
    expect(first.messages.map((m: Json) => m.payload.i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(first).toMatchObject({
      ready: true,
      has_more: true,
      omitted_count: 5,
      continuation: { tool: 'read_process_messages', same_filters: true },
    });
    expect(first.acked_message_ids).toHaveLength(100);
    const second = await ok(rt, child, 'read_process_messages', { limit: 100 });
    expect(second.messages.map((m: Json) => m.payload.i)).toEqual([100, 101, 102, 103, 104]);
    expect(second).toMatchObject({ has_more: false, omitted_count: 0, continuation: null });
  });

  it('[OT-57] an exact-id read of acked messages with include_acked and ack:false returns both and changes nothing', async () => {
    const { rt, parent, child } = await family();
    const a = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { a: 1 } })).message_id;
    const b = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { b: 1 } })).message_id;
    await ok(rt, child, 'read_process_messages', {});
    const before = await rt.messages(child);
    const r = await ok(rt, child, 'read_process_messages', { message_ids: [a, b], include_acked: true, ack: false, limit: 2 });
    expect(ids(r)).toEqual([a, b]);
    expect(r).toMatchObject({ acked_message_ids: [], has_more: false, omitted_count: 0 });
    expect(r.messages.map((m: Json) => m.status)).toEqual(['acked', 'acked']);
    expect(await rt.messages(child)).toEqual(before);
  });
});

describe('receive_process_messages', () => {
  it('returns matching unread messages and ACKs them by default; ack:false leaves them unread', async () => {
    const { rt, parent, child } = await family();
    const a = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { a: 1 }, channel: 'work' })).message_id;
    const b = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { b: 1 }, channel: 'chat' })).message_id;
    const peek = await ok(rt, child, 'receive_process_messages', { channel: 'work', ack: false });
    expect(peek).toMatchObject({ ready: true, acked_message_ids: [] });
    expect(ids(peek)).toEqual([a]);
    expect((await rt.messages(child)).map((m) => m.status)).toEqual(['unread', 'unread']);
    const took = await ok(rt, child, 'receive_process_messages', { channel: 'work' });
    expect(took.acked_message_ids).toEqual([a]);
    expect((await rt.messages(child)).map((m) => [m.messageId, m.status])).toEqual([
      [a, 'acked'],
      [b, 'unread'],
    ]);
    // An acked message is not received again; block=false without a match answers ready:false at once.
    expect(await ok(rt, child, 'receive_process_messages', { channel: 'work' })).toMatchObject({ ready: false, messages: [] });
    expect((await rt.process(child)).status).toBe('runnable');
  });

  it('[OT-55] a blocking receive with message_ids [] or limit 0 is refused and changes nothing', async () => {
    const { rt, child } = await family();
    const before = await rt.process(child);
    const emptyIds = await fails(rt, child, 'receive_process_messages', { block: true, message_ids: [] });
    expect(emptyIds.code).toBe('invalid_arguments');
    expect(emptyIds.message).toMatch(/message_ids/);
    const zero = await fails(rt, child, 'receive_process_messages', { block: true, limit: 0 });
    expect(zero.code).toBe('invalid_arguments');
    expect(zero.message).toMatch(/limit/);
    const after = await rt.process(child);
    expect(after).toMatchObject({ status: 'runnable', waitState: null, stateGeneration: before.stateGeneration });
    expect(await rt.events({ type: 'tool_waiting' })).toEqual([]);
    // Without block they are simply empty answers.
    expect(await ok(rt, child, 'receive_process_messages', { message_ids: [] })).toMatchObject({ ready: false, messages: [] });
    expect(await ok(rt, child, 'receive_process_messages', { limit: 0 })).toMatchObject({ ready: false, messages: [] });
  });

  it(`[K-20] block=true without a match parks in waiting_event{message}; a non-matching post leaves it waiting; a matching one wakes it in \
the same transaction`, async () => {
    const { rt, parent, child } = await family();
    const gen0 = (await rt.process(child)).stateGeneration;
    const parked = await rt.call(child, 'receive_process_messages', { block: true, channel: 'work' });
    expect(parked).toMatchObject({ ok: true, payload: null, wait: { kind: 'message', filters: { channel: 'work' } } });
    const waiting = await rt.process(child);
    expect(waiting).toMatchObject({
      status: 'waiting_event',
      waitState: { kind: 'message', filters: { channel: 'work' } },
      stateGeneration: gen0 + 1,
    });
    expect(await fails(rt, child, 'probe_touch', { label: 'while waiting' })).toMatchObject({ code: 'process_not_tool_callable' });

    const other = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: {}, channel: 'other' })).message_id;
    expect(await rt.process(child)).toMatchObject({ status: 'waiting_event', stateGeneration: gen0 + 1 });
    expect((await rt.messages(child)).map((m) => [m.messageId, m.status])).toEqual([[other, 'unread']]);

    const commits = commitGroups(rt);
    const work = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { go: true }, channel: 'work' })).message_id;
    commits.stop();
    expect(await rt.process(child)).toMatchObject({ status: 'runnable', waitState: null, stateGeneration: gen0 + 2 });
    // The post and the wake were published by one commit.
    const group = commits.groups.find((g) => g.includes('message_posted'));
    expect(group).toEqual(expect.arrayContaining(['message_posted', 'process_woken']));
    const woken = await rt.events({ type: 'process_woken' });
    expect(woken.map((e) => e.data.pid)).toEqual([child]);
    expect(String(woken[0]!.data.reason)).toContain(work);
  });

  it('[K-20] the saved receive resumes with no provider call and returns (and ACKs) the matching message', async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'wait for the human');
    const provider = new ScriptedProvider({
      processes: {
        [pid]: [
          [{ tool: 'receive_process_messages', args: { block: true, sender_pid: 'human:owner' } }],
          [{ tool: 'process_exit', args: { message: 'got it' } }],
        ],
      },
    });
    const first = await rt.run({ provider });
    expect(first).toMatchObject({ idle: true, quanta: 1 });
    expect(first.results[0]).toMatchObject({ kind: 'turn', stopReason: 'waiting_message' });
    expect(await rt.process(pid)).toMatchObject({
      status: 'waiting_event',
      waitState: { kind: 'message', filters: { sender_pid: 'human:owner' } },
    });
    expect(provider.calls).toBe(1);

    // A second run has nothing to do: a waiting process is not scheduled.
    expect(await rt.run({ provider })).toMatchObject({ quanta: 0, idle: true });
    expect(provider.calls).toBe(1);

    const msg = await rt.sendMessage(pid, { text: 'go' }, { from: 'human:owner' });
    expect((await rt.process(pid)).status).toBe('runnable');
    const callsAtResume: number[] = [];
    const second = await rt.run({ provider, onQuantum: (_q: QuantumResult) => callsAtResume.push(provider.calls) });
    const resumed = second.results[0]!;
    expect(resumed).toMatchObject({ kind: 'resumed', stopReason: 'completed', executed: ['receive_process_messages'] });
    expect(callsAtResume[0]).toBe(1);
    expect(resumed.results[0]).toMatchObject({ ok: true, payload: { ready: true, acked_message_ids: [msg.messageId] } });
    expect((resumed.results[0] as Json).payload.messages[0]).toMatchObject({
      message_id: msg.messageId,
      sender: 'human:owner',
      payload: { text: 'go' },
      status: 'acked',
    });
    expect((await rt.messages(pid)).map((m) => m.status)).toEqual(['acked']);
    expect(await rt.process(pid)).toMatchObject({ status: 'exited' });
    expect(provider.calls).toBe(2);
    // The resumed call is recorded as a resume of the same call, not a new call.
    expect((await rt.events({ type: 'tool_resumed' })).map((e) => e.data.tool)).toEqual(['receive_process_messages']);
  });

  it('a woken receive whose message was taken before it resumed waits again, still without a provider call', async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'wait for work');
    const provider = new ScriptedProvider({
      processes: { [pid]: [[{ tool: 'receive_process_messages', args: { block: true, channel: 'work' } }]] },
    });
    await rt.run({ provider });
    const first = await rt.sendMessage(pid, { n: 1 }, { channel: 'work' });
    expect((await rt.process(pid)).status).toBe('runnable');
    // The host reads it first (a runnable process's mailbox can be read by any caller of its tools).
    expect(await ok(rt, pid, 'read_process_messages', { channel: 'work' })).toMatchObject({ acked_message_ids: [first.messageId] });
    const again = await rt.run({ provider });
    expect(again.results).toMatchObject([{ pid, kind: 'resumed', stopReason: 'waiting_message' }]);
    expect(await rt.process(pid)).toMatchObject({ status: 'waiting_event', waitState: { kind: 'message', filters: { channel: 'work' } } });
    expect(provider.calls).toBe(1);
    const second = await rt.sendMessage(pid, { n: 2 }, { channel: 'work' });
    const last = await rt.run({ provider });
    expect(last.results[0]).toMatchObject({
      kind: 'resumed',
      results: [{ ok: true, payload: { acked_message_ids: [second.messageId] } }],
    });
    expect(provider.calls).toBe(2); // the exhausted script's exit, after the resume
    expect((await rt.process(pid)).status).toBe('exited');
  });

  it('a blocking receive with a matching unread message returns it at once without waiting', async () => {
    const { rt, parent, child } = await family();
    const m = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: {}, channel: 'work' })).message_id;
    const r = await rt.call(child, 'receive_process_messages', { block: true, channel: 'work' });
    expect(r.ok && r.wait).toBeFalsy();
    expect(r).toMatchObject({ ok: true, payload: { ready: true, acked_message_ids: [m] } });
    expect((await rt.process(child)).status).toBe('runnable');
  });

  it('[OT-58] wait_child_process on a non-child is not_direct_child; block:false on a live child answers ready:false', async () => {
    const { rt, parent, child, sibling } = await family();
    expect(await fails(rt, child, 'wait_child_process', { child_pid: sibling })).toMatchObject({ code: 'not_direct_child' });
    expect(await fails(rt, child, 'wait_child_process', { child_pid: parent })).toMatchObject({ code: 'not_direct_child' });
    expect(await fails(rt, parent, 'wait_child_process', { child_pid: 'pid_00000000000000ff' })).toMatchObject({
      code: 'not_direct_child',
    });
    expect(await ok(rt, parent, 'wait_child_process', { child_pid: child, block: false })).toMatchObject({
      child_pid: child,
      ready: false,
      status: 'runnable',
      result_oid: null,
    });
    expect((await rt.process(parent)).status).toBe('runnable');
  });
});

describe('interrupts and notices', () => {
  it(`[K-21] an unread interrupt refuses the next non-message tool with interrupted_by_message; it does not run until the interrupt is \
read`, async () => {
    const { rt, probe, parent, child } = await family();
    const stop = (
      await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { stop: true }, delivery: 'interrupt', channel: 'control' })
    ).message_id;
    const usedBefore = (await rt.budget(child)).usage.tool_calls ?? 0;
    expect(await fails(rt, child, 'probe_touch', { label: 'refused' })).toMatchObject({
      code: 'interrupted_by_message',
      details: { phase: 'before_tool_call', count: 1, message_ids: [stop], channels: ['control'] },
    });
    expect(await fails(rt, child, 'process_exit', { message: 'refused too' })).toMatchObject({ code: 'interrupted_by_message' });
    expect(probe.runs).toEqual([]);
    expect((await rt.process(child)).status).toBe('runnable');
    expect((await rt.budget(child)).usage.tool_calls ?? 0).toBe(usedBefore);
    expect((await rt.audit({ action: 'tool.call' })).filter((a) => a.decision === 'interrupted_by_message').map((a) => a.target)).toEqual([
      'tool:probe_touch',
      'tool:process_exit',
    ]);

    // Message tools are how an interrupt is read: they are not refused.
    const read = await ok(rt, child, 'read_process_messages', {});
    expect(read.messages.map((m: Json) => [m.delivery, m.payload])).toEqual([['interrupt', { stop: true }]]);
    expect(await ok(rt, child, 'probe_touch', { label: 'after' })).toMatchObject({ label: 'after' });
    expect(probe.runs).toEqual(['after']);
  });

  it(`[K-21] under the scheduler the batch stops at the refused call (stop_reason interrupted_by_message) and the rest never \
runs`, async () => {
    h = await openHarness();
    const { rt, probe } = h;
    const pid = await spawnProbe(rt, 'be interrupted');
    await rt.sendMessage(pid, { text: 'stop' }, { delivery: 'interrupt' });
    const provider = new ScriptedProvider({
      processes: {
        [pid]: [
          [
            { tool: 'probe_touch', args: { label: 'a' } },
            { tool: 'probe_touch', args: { label: 'b' } },
          ],
          [{ tool: 'read_process_messages', args: {} }],
          [{ tool: 'probe_touch', args: { label: 'c' } }],
        ],
      },
    });
    const report = await rt.run({ provider });
    expect(report.results[0]).toMatchObject({
      kind: 'turn',
      stopReason: 'interrupted_by_message',
      executed: ['probe_touch'],
      skipped: ['probe_touch'],
    });
    expect(probe.runs).toEqual(['c']);
    expect(await rt.process(pid)).toMatchObject({ status: 'exited' });
    const batches = await rt.audit({ action: 'llm.action_batch' });
    expect(batches[0]).toMatchObject({
      decision: 'interrupted_by_message',
      details: { requested: ['probe_touch', 'probe_touch'], executed: ['probe_touch'], skipped: ['probe_touch'] },
    });
  });

  it('unread normal mail attaches a message_notice to a result and stops the batch there; message tools carry none', async () => {
    const { rt, probe, parent, child } = await family();
    const m = (await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { fyi: 1 } })).message_id;
    const touched = await rt.call(child, 'probe_touch', { label: 'ran' });
    expect(touched).toMatchObject({
      ok: true,
      payload: { label: 'ran' },
      notices: [{ kind: 'message_notice', phase: 'after_tool_call', unread: 1, message_ids: [m], channels: ['default'] }],
    });
    expect(probe.runs).toEqual(['ran']);
    const read = await rt.call(child, 'read_process_messages', {});
    expect(read.ok && 'notices' in read).toBe(false);
    expect(read).toMatchObject({ ok: true, payload: { acked_message_ids: [m] } });
    const quiet = await rt.call(child, 'probe_touch', { label: 'quiet' });
    expect(quiet.ok && 'notices' in quiet).toBe(false);

    // Through the executor: the notice stops the batch after the call it is attached to.
    const pid = await spawnProbe(rt, 'notice me');
    await rt.sendMessage(pid, { fyi: 2 });
    const provider = new ScriptedProvider({
      processes: {
        [pid]: [
          [
            { tool: 'probe_touch', args: { label: 'first' } },
            { tool: 'probe_touch', args: { label: 'second' } },
          ],
        ],
        '*': [],
      },
    });
    const report = await rt.run({ provider });
    expect(report.results.find((q) => q.pid === pid)).toMatchObject({
      kind: 'turn',
      stopReason: 'message_notice',
      executed: ['probe_touch'],
      skipped: ['probe_touch'],
    });
    expect(probe.runs).toEqual(['ran', 'quiet', 'first']);
  });
});

describe('human messages', () => {
  it(`rt.sendMessage posts from human:owner on the human channel; the process reads and ACKs it with read_process_messages \
{}`, async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'listen to the human');
    const m = await rt.sendMessage(pid, { text: 'please also add tests' }, { from: 'human:owner' });
    expect(m).toMatchObject({ sender: 'human:owner', recipientPid: pid, channel: 'human', delivery: 'normal', status: 'unread' });
    const other = await rt.sendMessage(pid, { text: 'from ops' }, { from: 'human:ops', channel: 'ops' });
    expect(other).toMatchObject({ sender: 'human:ops', channel: 'ops' });

    await expect(rt.sendMessage(pid, {}, { from: pid })).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(rt.sendMessage(pid, {}, { from: 'human:' })).rejects.toMatchObject({ code: 'invalid_arguments' });

    const fromOwner = await ok(rt, pid, 'read_process_messages', { sender_pid: 'human:owner', ack: false });
    expect(ids(fromOwner)).toEqual([m.messageId]);
    const drained = await ok(rt, pid, 'read_process_messages', {});
    expect(drained.acked_message_ids).toEqual([m.messageId, other.messageId]);
    expect((await rt.messages(pid)).map((x) => [x.sender, x.status])).toEqual([
      ['human:owner', 'acked'],
      ['human:ops', 'acked'],
    ]);
    expect((await rt.audit({ action: 'message.post' })).map((a) => a.actor)).toEqual(['human:owner', 'human:ops']);

    await rt.signal(pid, 'terminate');
    await expect(rt.sendMessage(pid, { late: true })).rejects.toMatchObject({ code: 'invalid_state' });
    expect((await rt.messages(pid)).length).toBe(2);
  });

  it('a human message wakes a process blocked on receive {sender_pid: human:owner}; a message from another sender does not', async () => {
    const { rt, parent, child } = await family();
    await ok(rt, child, 'receive_process_messages', { block: true, sender_pid: 'human:owner' });
    await ok(rt, parent, 'send_process_message', { to_pid: child, payload: { from: 'parent' } });
    await rt.sendMessage(child, { from: 'ops' }, { from: 'human:ops' });
    expect((await rt.process(child)).status).toBe('waiting_event');
    await rt.sendMessage(child, { from: 'owner' }, { from: 'human:owner' });
    expect((await rt.process(child)).status).toBe('runnable');
  });
});
