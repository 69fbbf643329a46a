import { ScriptedProvider } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type Harness } from './internal/testing/harness.js';
import { openSse, type SseClient } from './internal/testing/sse-client.js';

let h: Harness | undefined;
const streams: SseClient[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) await s.close();
  await h?.stop();
  h = undefined;
});

async function connect(query = '', headers: Record<string, string> = {}): Promise<SseClient> {
  const s = await openSse(`${h!.server.url}/api/events/stream${query}`, { authorization: `Bearer ${h!.server.token}`, ...headers });
  streams.push(s);
  return s;
}

/** Connects and waits for the first comment: from then on the server is listening, so no later event is missed. */
async function connected(query = '', headers: Record<string, string> = {}): Promise<SseClient> {
  const s = await connect(query, headers);
  expect(s.status).toBe(200);
  expect(s.contentType).toMatch(/^text\/event-stream/);
  expect(await s.next()).toEqual({ comment: 'connected' });
  return s;
}

/** The next durable event message (audit records skipped). */
async function nextEvent(s: SseClient) {
  for (;;) {
    const m = await s.nextMessage();
    if (m.event !== 'audit.appended') return m;
  }
}

const head = async () => (await h!.rt.events({ limit: 10_000 })).at(-1)?.seq ?? 0;

describe('GET /api/events/stream', () => {
  it('[K-54] a cursor ahead of the store gets one event.invalidated (sse_cursor_not_replayable, id = head), then live events', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    const top = await head();
    const s = await connected(`?cursor=${top + 100}`);
    expect(await s.nextMessage()).toEqual({
      event: 'event.invalidated',
      id: String(top),
      data: expect.objectContaining({ reason: 'sse_cursor_not_replayable', cursor: top + 100, head: top }),
    });
    await h.rt.sendMessage(p.pid, { text: 'hi' });
    expect(await nextEvent(s)).toMatchObject({
      event: 'message.posted',
      id: String(top + 1),
      data: { seq: top + 1, type: 'message_posted' },
    });
  });

  it('[K-54] a cursor older than the replay window is invalidated too', async () => {
    h = await startServer({ sseReplayLimit: 2 });
    for (const goal of ['a', 'b']) await h.rt.spawn({ goal });
    const top = await head();
    expect(top).toBeGreaterThan(2);
    const s = await connected('?cursor=0');
    expect(await s.nextMessage()).toMatchObject({
      event: 'event.invalidated',
      id: String(top),
      data: { reason: 'sse_cursor_not_replayable', cursor: 0, head: top },
    });
    // Within the window it replays.
    const t = await connected(`?cursor=${top - 2}`);
    expect((await t.nextMessage()).id).toBe(String(top - 1));
    expect((await t.nextMessage()).id).toBe(String(top));
  });

  it('[K-54] connect with a cursor: replays what came after it, then streams spawn and tool-call events live, ids in order', async () => {
    h = await startServer();
    const first = await h.rt.spawn({ goal: 'first' });
    const cursor = await head();
    await h.rt.sendMessage(first.pid, { text: 'while you were away' });
    await h.rt.spawn({ goal: 'third' });
    const missed = (await h.rt.events({ after: cursor })).map((e) => e.seq);
    expect(missed.length).toBeGreaterThan(0);

    const s = await connected(`?cursor=${cursor}`);
    const spawned = await h.api('/api/processes', { json: { goal: 'second' } });
    const pid = spawned.body.pid as string;
    await h.rt.grant(pid, 'clock:now', ['read']);
    const called = await h.api(`/api/processes/${pid}/call`, { json: { tool: 'get_current_time', args: {} } });
    expect(called.body.ok).toBe(true);

    const expected = (await h.rt.events({ after: cursor, limit: 10_000 })).map((e) => ({ id: String(e.seq), type: e.type }));
    const got: { id: string; type: string }[] = [];
    while (got.length < expected.length) {
      const m = await s.nextMessage();
      if (m.event === 'audit.appended') continue;
      got.push({ id: m.id!, type: m.data.type });
    }
    expect(got).toEqual(expected);
    expect(got.slice(0, missed.length).map((g) => Number(g.id))).toEqual(missed);
    expect(got.map((g) => g.type)).toEqual(expect.arrayContaining(['process_created', 'tool_called', 'tool_completed']));
    expect(got.map((g) => Number(g.id))).toEqual([...got.map((g) => Number(g.id))].sort((a, b) => a - b));
  });

  it('names messages, human requests and audit records by kind; audit records carry no id', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    const s = await connected();
    await h.api(`/api/processes/${p.pid}/message`, { json: { payload: { text: 'hi' } } });
    await h.rt.grant(p.pid, 'human:owner', ['write']);
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    await h.rt.call(p.pid, 'ask_human', { question: 'Which region?' });
    const seen = new Map<string, { id?: string; data?: any }>();
    while (!seen.has('human_request.updated')) {
      const m = await s.nextMessage();
      if (!seen.has(m.event!)) seen.set(m.event!, m);
    }
    expect(seen.get('message.posted')).toMatchObject({ id: expect.stringMatching(/^\d+$/), data: { type: 'message_posted', pid: p.pid } });
    expect(seen.get('human_request.updated')).toMatchObject({ data: { type: 'human_request_created', pid: p.pid } });
    const audit = seen.get('audit.appended')!;
    expect(audit.id).toBeUndefined();
    expect(audit.data).toMatchObject({ seq: expect.any(Number), action: expect.any(String) });
  });

  it('a reconnect resumes from Last-Event-ID when no cursor is given; a bad cursor is 400', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    const cursor = await head();
    await h.rt.sendMessage(p.pid, { text: 'hi' });
    const s = await connected('', { 'last-event-id': String(cursor) });
    expect(await nextEvent(s)).toMatchObject({ id: String(cursor + 1), data: { type: 'message_posted' } });
    expect(await h.api('/api/events/stream?cursor=abc')).toMatchObject({ status: 400, body: { error: { details: { field: 'cursor' } } } });
    expect(await h.api('/api/events/stream', { token: null })).toMatchObject({ status: 401 });
  });

  it('a disconnect stops its watch of the runtime', async () => {
    h = await startServer();
    // Every watch the server starts from here on is counted while it is live; `stopped` resolves at its stop.
    const rt = h.rt;
    const realWatch = rt.watch.bind(rt);
    const live: string[] = [];
    let stopped!: () => void;
    const removed = new Promise<void>((resolve) => (stopped = resolve));
    rt.watch = (listener) => {
      const kinds = Object.keys(listener).sort().join('+');
      live.push(kinds);
      const stop = realWatch(listener);
      return () => {
        live.splice(live.indexOf(kinds), 1);
        stop();
        stopped();
      };
    };
    const s = await connected();
    expect(live).toEqual(['audit+event']);
    streams.splice(streams.indexOf(s), 1);
    await s.close();
    await removed;
    expect(live).toEqual([]);
    delete (rt as { watch?: unknown }).watch;
  });

  it('sends heartbeat comments while idle', async () => {
    h = await startServer({ heartbeatMs: 20 });
    const s = await connected();
    expect(await s.next()).toEqual({ comment: 'heartbeat' });
  });

  it('a scheduler run over HTTP streams its model call as llm_call.appended and an answer as human_request.updated', async () => {
    h = await startServer({ provider: new ScriptedProvider([[{ tool: 'ask_human', args: { question: 'Which region?' } }]]) });
    const p = await h.rt.spawn({ goal: 'x' });
    await h.rt.grant(p.pid, 'human:owner', ['write']);
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    const s = await connected();
    expect((await h.api('/api/scheduler/run', { json: { max_quanta: 1 } })).status).toBe(200);
    const until = async (event: string) => {
      for (;;) {
        const m = await nextEvent(s);
        if (m.event === event) return m;
      }
    };
    expect(await until('llm_call.appended')).toMatchObject({ data: { type: 'llm_call', pid: p.pid } });
    expect(await until('human_request.updated')).toMatchObject({ data: { type: 'human_request_created' } });
    const [req] = await h.rt.humanRequests({ pid: p.pid });
    await h.api(`/api/human-requests/${req!.id}/respond`, { json: { approved: true, answer: 'north' } });
    expect(await until('human_request.updated')).toMatchObject({
      data: { type: 'human_request_answered', data: { request_id: req!.id, status: 'approved' } },
    });
  });
});
