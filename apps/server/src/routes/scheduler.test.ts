import { ScriptedProvider, type LlmProvider, type LlmRequest, type LlmResponse } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint } from '../internal/testing/fingerprint.js';
import { startServer, type Harness } from '../internal/testing/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('POST /api/scheduler/run', () => {
  it('without a provider it is 409 naming the missing provider, and runs nothing', async () => {
    h = await startServer();
    await h.rt.spawn({ goal: 'x' });
    const before = await fingerprint(h.rt);
    const r = await h.api('/api/scheduler/run', { json: { max_quanta: 5 } });
    expect(r).toMatchObject({
      status: 409,
      body: { error: { code: 'conflict', details: { missing: 'provider' }, message: expect.stringContaining('provider') } },
    });
    expect(await fingerprint(h.rt)).toEqual(before);
    expect(await h.api('/api/scheduler/run', { json: {} })).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'max_quanta' } } },
    });
  });

  it('with a scripted provider, a whole story over HTTP: spawn, run into a question, answer it, run to the exit', async () => {
    const provider = new ScriptedProvider([
      [{ tool: 'ask_human', args: { question: 'Which region?' } }],
      [{ tool: 'process_exit', args: { message: 'done' } }],
    ]);
    h = await startServer({ provider });
    expect((await h.api('/api/health')).body).toMatchObject({ provider: 'scripted' });
    const { pid } = (await h.api('/api/processes', { json: { goal: 'ask the owner' } })).body as { pid: string };
    await h.rt.grant(pid, 'human:owner', ['write']);
    await h.rt.activateSkill(pid, 'agent-libos-child-processes');

    const first = await h.api('/api/scheduler/run', { json: { max_quanta: 10 } });
    expect(first).toMatchObject({
      status: 200,
      body: { quanta: 1, idle: true, results: [{ pid, kind: 'turn', stop_reason: 'waiting_human' }] },
    });
    const [req] = (await h.api('/api/human-requests?status=pending')).body as { id: string }[];
    expect((await h.api(`/api/human-requests/${req!.id}/respond`, { json: { approved: true, answer: 'north' } })).status).toBe(200);

    const second = await h.api('/api/scheduler/run', { json: { max_quanta: 10 } });
    expect(second).toMatchObject({
      status: 200,
      body: {
        idle: true,
        results: [
          { pid, kind: 'resumed', results: [{ ok: true, payload: { answer: 'north' } }] },
          { pid, kind: 'turn', executed: ['process_exit'] },
        ],
      },
    });
    expect((await h.api(`/api/processes/${pid}`)).body).toMatchObject({ status: 'exited' });
    expect((await h.api(`/api/processes/${pid}/llm-calls`)).body).toHaveLength(2);
  });

  it('max_quanta bounds the run', async () => {
    h = await startServer({
      provider: new ScriptedProvider({
        processes: { '*': [[{ tool: 'discover_skills', args: {} }], [{ tool: 'discover_skills', args: {} }]] },
      }),
    });
    await h.rt.spawn({ goal: 'a' });
    await h.rt.spawn({ goal: 'b' });
    const r = await h.api('/api/scheduler/run', { json: { max_quanta: 3 } });
    expect(r).toMatchObject({ status: 200, body: { quanta: 3, idle: false } });
  });

  it('a second run while one is in progress is 409; the first one finishes', async () => {
    // A provider that holds its first turn until the test lets it go.
    let entered!: () => void;
    const inTurn = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const scripted = new ScriptedProvider([]);
    const provider: LlmProvider = {
      name: 'held',
      model: 'held',
      async completeAction(req: LlmRequest): Promise<LlmResponse> {
        entered();
        await released;
        return scripted.completeAction(req);
      },
    };
    h = await startServer({ provider });
    await h.rt.spawn({ goal: 'x' });
    const first = h.api('/api/scheduler/run', { json: { max_quanta: 1 } });
    await inTurn;
    expect(await h.api('/api/scheduler/run', { json: { max_quanta: 1 } })).toMatchObject({
      status: 409,
      body: { error: { code: 'conflict', details: { running: true } } },
    });
    release();
    expect(await first).toMatchObject({ status: 200, body: { quanta: 1 } });
  });
});
