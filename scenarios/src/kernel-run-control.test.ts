import { LibosError } from '@libos/sdk';
import { ScriptedProvider, type LlmProvider, type LlmRequest, type LlmResponse } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { openHarness, spawnProbe, type Harness } from './support/kernel-harness.js';

// Run control for a host that runs the scheduler in the background (libos serve --provider): `signal` stops a run
// and cancels the model call in flight (the process is paused, never failed), `wake` ends an idle wait so new work
// is picked up at once. docs/behaviour/kernel.md (K-40) states the provider-failure rule.

let h: Harness | undefined;
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
});

/** A provider that holds every call until its request's signal aborts, then rejects as the OpenAI provider does. */
class HangingProvider implements LlmProvider {
  readonly name = 'hanging';
  readonly model = 'hanging-model';
  entered!: () => void;
  readonly inCall = new Promise<void>((resolve) => (this.entered = resolve));
  seenSignal: AbortSignal | undefined;
  completeAction(req: LlmRequest): Promise<LlmResponse> {
    this.seenSignal = req.signal;
    this.entered();
    return new Promise((_resolve, reject) => {
      req.signal?.addEventListener('abort', () => reject(new LibosError('cancelled', 'hanging provider: request aborted')), { once: true });
    });
  }
}

describe('run control', () => {
  it('[K-40] aborting signal cancels the model call in flight: the process is paused with the cancellation, the run ends', async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'talk to a slow model');
    const provider = new HangingProvider();
    const stop = new AbortController();
    const running = rt.run({ provider, signal: stop.signal });
    await provider.inCall;
    expect(provider.seenSignal).toBe(stop.signal);
    stop.abort();
    const report = await running;
    expect(report).toMatchObject({ quanta: 1, idle: false, results: [{ pid, kind: 'paused', error: { code: 'cancelled' } }] });
    expect(await rt.process(pid)).toMatchObject({
      status: 'paused',
      waitState: { kind: 'paused', reason: 'model provider failed: cancelled: hanging provider: request aborted' },
    });
    // A resume makes it runnable again; the next run takes it to its exit.
    await rt.signal(pid, 'resume');
    await rt.run({ provider: new ScriptedProvider([[{ tool: 'process_exit', args: { message: 'done' } }]]) });
    expect((await rt.process(pid)).status).toBe('exited');
  });

  it('a run whose signal is already aborted starts no quantum', async () => {
    h = await openHarness();
    const pid = await spawnProbe(h.rt, 'never scheduled');
    const report = await h.rt.run({ provider: new ScriptedProvider([]), signal: AbortSignal.abort() });
    expect(report).toEqual({ quanta: 0, idle: false, results: [] });
    expect((await h.rt.process(pid)).status).toBe('runnable');
  });

  it('wake ends the idle wait for a sleeper: the run returns idle at once and the sleeper keeps waiting', async () => {
    h = await openHarness();
    const { rt } = h;
    const { pid } = await rt.spawn({ goal: 'sleep a while' });
    await rt.grant(pid, 'clock:sleep', ['read']);
    const slept = await rt.call(pid, 'sleep', { seconds: 50 });
    expect(slept).toMatchObject({ ok: true });
    expect((await rt.process(pid)).waitState).toMatchObject({ kind: 'timer' });
    const wake = new AbortController();
    const running = rt.run({ provider: new ScriptedProvider([]), wake: wake.signal });
    wake.abort();
    expect(await running).toEqual({ quanta: 0, idle: true, results: [] });
    expect((await rt.process(pid)).status).toBe('waiting_event');
  });
});
