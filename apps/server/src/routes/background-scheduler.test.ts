import { LibosError } from '@libos/sdk';
import { ScriptedProvider, type LlmProvider, type LlmRequest, type LlmResponse, type Runtime, type RuntimeEvent } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { openSse, type SseClient, type SseMessage } from '../internal/testing/sse-client.js';
import { startServer, type Harness } from '../internal/testing/harness.js';

let h: Harness | undefined;
const streams: SseClient[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) await s.close();
  await h?.stop();
  h = undefined;
});

/** Resolves with the first committed event that matches. */
function nextEvent(rt: Runtime, match: (e: RuntimeEvent) => boolean): Promise<RuntimeEvent> {
  return new Promise((resolve) => {
    const stop = rt.watch({
      event: (e) => {
        if (!match(e)) return;
        stop();
        resolve(e);
      },
    });
  });
}

/** Reads the scheduler's state until no pass is under way; answers it. */
async function idle(harness: Harness): Promise<Record<string, unknown>> {
  for (;;) {
    const { body } = await harness.api('/api/scheduler');
    if (!body.busy) return body;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Reads SSE messages until one matches; returns every message read. */
async function readUntil(sse: SseClient, match: (m: SseMessage) => boolean): Promise<SseMessage[]> {
  const seen: SseMessage[] = [];
  for (;;) {
    const m = await sse.nextMessage();
    seen.push(m);
    if (match(m)) return seen;
  }
}

const EXIT_TURN = [{ tool: 'process_exit', args: { message: 'done' } }];

describe('the background scheduler (serve({ provider, background: true }))', () => {
  it('runs an HTTP-spawned process to its exit with no run request; its progress is on the SSE stream', async () => {
    h = await startServer({ provider: new ScriptedProvider({ processes: { '*': [EXIT_TURN] } }), background: true });
    const sse = await openSse(`${h.server.url}/api/events/stream`, { authorization: `Bearer ${h.server.token}` });
    streams.push(sse);
    expect((await sse.next()).comment).toBe('connected');
    expect((await h.api('/api/scheduler')).body).toMatchObject({ mode: 'background', state: 'running', provider: 'scripted' });
    const { pid } = (await h.api('/api/processes', { json: { goal: 'exit at once' } })).body as { pid: string };
    const seen = await readUntil(sse, (m) => m.data?.type === 'process_exited' && m.data?.pid === pid);
    expect(seen.map((m) => m.event)).toEqual(expect.arrayContaining(['llm_call.appended', 'event.appended']));
    expect(seen.map((m) => m.data?.type)).toEqual(expect.arrayContaining(['process_created', 'llm_call', 'tool_called', 'process_exited']));
    expect((await h.api(`/api/processes/${pid}`)).body).toMatchObject({ status: 'exited' });
    expect((await h.api('/api/scheduler/run', { json: { max_quanta: 1 } })).body).toMatchObject({
      error: { code: 'conflict', details: { background: true } },
    });
  });

  it('pause lets nothing start (a new process stays runnable); resume runs it; both are events and host audit records', async () => {
    h = await startServer({ provider: new ScriptedProvider({ processes: { '*': [EXIT_TURN] } }), background: true });
    const paused = await h.api('/api/scheduler/pause', { json: { reason: 'maintenance' } });
    expect(paused).toMatchObject({ status: 200, body: { state: 'paused' } });
    // A pass already under way when the pause came (the first one, over the empty store) ends before anything is spawned.
    const quanta = (await idle(h)).quanta as number;
    const { pid } = (await h.api('/api/processes', { json: { goal: 'wait for the resume' } })).body as { pid: string };
    // The spawn's event reaches the paused scheduler, which starts nothing.
    expect((await h.api('/api/scheduler')).body).toMatchObject({ state: 'paused', quanta });
    expect((await h.rt.process(pid)).status).toBe('runnable');
    const exited = nextEvent(h.rt, (e) => e.type === 'process_exited' && e.pid === pid);
    expect((await h.api('/api/scheduler/resume', { method: 'POST' })).body).toMatchObject({ state: 'running' });
    await exited;
    expect((await h.rt.events({})).map((e) => e.type).filter((t) => t.startsWith('scheduler_'))).toEqual([
      'scheduler_started',
      'scheduler_paused',
      'scheduler_resumed',
    ]);
    expect((await h.rt.audit({ action: 'scheduler.pause' }))[0]).toMatchObject({
      actor: 'host',
      details: { reason: 'maintenance', provider: 'scripted' },
    });
  });

  it('a provider failure pauses the process with the error (seen on SSE); a resume signal runs it again', async () => {
    let down = true;
    const scripted = new ScriptedProvider({ processes: { '*': [EXIT_TURN] } });
    const provider: LlmProvider = {
      name: 'flaky',
      model: 'flaky-1',
      async completeAction(req: LlmRequest): Promise<LlmResponse> {
        if (down) throw new LibosError('provider_error', 'openai provider: network error: connect ECONNREFUSED 127.0.0.1:9');
        return scripted.completeAction(req);
      },
    };
    h = await startServer({ provider, background: true });
    const sse = await openSse(`${h.server.url}/api/events/stream`, { authorization: `Bearer ${h.server.token}` });
    streams.push(sse);
    await sse.next();
    const { pid } = (await h.api('/api/processes', { json: { goal: 'talk to a model that is down' } })).body as { pid: string };
    const [pausedFrame] = (await readUntil(sse, (m) => m.data?.type === 'process_paused')).slice(-1);
    expect(pausedFrame!.data).toMatchObject({ pid, data: { error: { code: 'provider_error' } } });
    expect((await h.api(`/api/processes/${pid}`)).body).toMatchObject({
      status: 'paused',
      wait_state: { reason: expect.stringContaining('ECONNREFUSED') },
    });
    expect((await h.api('/api/scheduler')).body).toMatchObject({ state: 'running', error: null });
    down = false;
    const exited = nextEvent(h.rt, (e) => e.type === 'process_exited' && e.pid === pid);
    expect((await h.api(`/api/processes/${pid}/signal`, { json: { signal: 'resume' } })).status).toBe(200);
    await exited;
    expect((await h.rt.process(pid)).status).toBe('exited');
  });

  it('close() stops the scheduler: a model call in flight is cancelled and its process paused, not failed', async () => {
    let entered!: () => void;
    const inCall = new Promise<void>((resolve) => (entered = resolve));
    const provider: LlmProvider = {
      name: 'slow',
      model: 'slow-1',
      completeAction(req: LlmRequest): Promise<LlmResponse> {
        entered();
        return new Promise((_resolve, reject) =>
          req.signal?.addEventListener('abort', () => reject(new LibosError('cancelled', 'slow provider: aborted')), { once: true }),
        );
      },
    };
    h = await startServer({ provider, background: true });
    const { pid } = (await h.api('/api/processes', { json: { goal: 'think slowly' } })).body as { pid: string };
    await inCall;
    await h.server.close();
    expect(await h.rt.process(pid)).toMatchObject({
      status: 'paused',
      waitState: { reason: 'model provider failed: cancelled: slow provider: aborted' },
    });
    expect((await h.rt.events({})).at(-1)).toMatchObject({ type: 'scheduler_stopped' });
  });

  it('without a background scheduler, pause and resume are 409 and the status says on_request; background needs a provider', async () => {
    h = await startServer();
    expect((await h.api('/api/scheduler')).body).toEqual({ mode: 'on_request', provider: null });
    expect(await h.api('/api/scheduler/pause', { json: {} })).toMatchObject({
      status: 409,
      body: { error: { details: { missing: 'background_scheduler' } } },
    });
    expect(await h.api('/api/scheduler/resume', { method: 'POST' })).toMatchObject({ status: 409 });
    await expect(startServer({ background: true })).rejects.toMatchObject({ code: 'invalid_arguments', details: { field: 'provider' } });
  });
});
