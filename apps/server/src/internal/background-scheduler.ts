import type { LlmProfile, LlmProvider, Runtime } from '@libos/kernel';
import { LibosError, type ErrorPayload } from '@libos/sdk';
import type { SchedulerState, SchedulerStatus } from '../scheduler-status.js';
import { asLibosError } from './errors.js';

export type { SchedulerState, SchedulerStatus } from '../scheduler-status.js';

export interface BackgroundSchedulerOptions {
  readonly profile?: LlmProfile | null;
  /** Receives an error of the loop itself (the scheduler then pauses); default: ignored here, kept in the status. */
  readonly onError?: (err: unknown) => void;
}

/**
 * The scheduler run in the background of a server: one quantum at a time while anything is runnable, then idle
 * until an event may have made something runnable (a spawn, a message, an answer, a resume, a timer). Pausing lets
 * the running quantum finish and starts no other; resuming starts again. A provider failure pauses only its process
 * (the kernel's rule); an error of the scheduler itself (e.g. a full disk) pauses the scheduler with that error.
 * State changes are durable events (`scheduler_started|paused|resumed|stopped`) and host audit records, so they reach
 * the SSE stream like the quanta's own events.
 *
 * @example
 * const scheduler = new BackgroundScheduler(rt, provider);
 * scheduler.start();
 * await scheduler.pause('maintenance');
 * await scheduler.stop();
 */
/** How often the loop of one host of many looks for trees to claim when no event woke it. */
const HOST_CLAIM_POLL_MS = 1000;

export class BackgroundScheduler {
  readonly #rt: Runtime;
  readonly #provider: LlmProvider;
  readonly #profile: LlmProfile | null;
  readonly #onError: (err: unknown) => void;
  readonly #stop = new AbortController();
  #state: SchedulerState = 'paused';
  #busy = false;
  #quanta = 0;
  #error: ErrorPayload | null = null;
  /** Set by every committed event or audit record: something may have become runnable since the last run looked. */
  #dirty = true;
  /** Ends the kernel's idle wait (for a sleeper's timer) when new work may have arrived. */
  #wake: AbortController | null = null;
  /** Resolves the loop's own idle wait. */
  #kick: (() => void) | null = null;
  #loop: Promise<void> | null = null;

  constructor(rt: Runtime, provider: LlmProvider, opts: BackgroundSchedulerOptions = {}) {
    this.#rt = rt;
    this.#provider = provider;
    this.#profile = opts.profile ?? null;
    this.#onError = opts.onError ?? (() => {});
  }

  status(): SchedulerStatus {
    return {
      mode: 'background',
      state: this.#state,
      provider: this.#provider.name,
      model: this.#provider.model,
      profile: this.#profile?.name ?? null,
      busy: this.#busy,
      quanta: this.#quanta,
      error: this.#error,
    };
  }

  /** Starts the loop (once). */
  async start(): Promise<void> {
    if (this.#loop) return;
    await this.#record('scheduler_started', 'scheduler.start', {});
    this.#state = 'running';
    this.#loop = this.#run();
  }

  /** No quantum starts after the running one (if any) ends. 409 `conflict` once stopped; a no-op when paused. */
  async pause(reason?: string): Promise<SchedulerStatus> {
    this.#assertLive();
    if (this.#state === 'running') {
      this.#state = 'paused';
      await this.#record('scheduler_paused', 'scheduler.pause', reason ? { reason } : {});
    }
    return this.status();
  }

  /** Runs again (and clears a self-pause's error). A no-op when running. */
  async resume(): Promise<SchedulerStatus> {
    this.#assertLive();
    if (this.#state === 'paused') {
      this.#state = 'running';
      this.#error = null;
      this.#dirty = true;
      await this.#record('scheduler_resumed', 'scheduler.resume', {});
      this.#kick?.();
    }
    return this.status();
  }

  /**
   * Stops for good: no quantum starts, an idle wait ends, and a model call in flight is cancelled (its process is
   * paused, so a later run resumes it). Resolves when the loop has ended. Idempotent.
   */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return this.#loop ?? undefined;
    const wasStarted = this.#loop !== null;
    this.#state = 'stopped';
    this.#stop.abort();
    this.#wake?.abort();
    this.#kick?.();
    await this.#loop;
    if (wasStarted) await this.#record('scheduler_stopped', 'scheduler.stop', { quanta: this.#quanta }).catch(() => undefined);
  }

  #assertLive(): void {
    if (this.#state === 'stopped')
      throw new LibosError('conflict', 'scheduler: stopped (the server is closing)', { details: { state: 'stopped' } });
  }

  async #record(type: string, action: string, data: Record<string, unknown>): Promise<void> {
    const details = { provider: this.#provider.name, model: this.#provider.model, ...data };
    await this.#rt.record({
      event: { type, data: details },
      audit: { action, target: 'scheduler', decision: action.slice('scheduler.'.length), details },
    });
  }

  /** Waits until an event arrives or the state changes. */
  #idle(): Promise<void> {
    return new Promise((resolve) => {
      this.#kick = () => {
        this.#kick = null;
        resolve();
      };
    });
  }

  async #run(): Promise<void> {
    const onEvent = () => {
      this.#dirty = true;
      this.#wake?.abort();
      this.#kick?.();
    };
    // Every committed change emits an event or an audit record (a host resume only audits): either may wake work.
    const unwatch = this.#rt.watch({ event: onEvent, audit: onEvent });
    // One host of many: another host's events reach this one through its event feed, but a dead host's lease running
    // out emits nothing, so the loop also looks for trees to take over every second.
    const lookAgain = this.#rt.hostId === null ? null : setInterval(onEvent, HOST_CLAIM_POLL_MS);
    lookAgain?.unref();
    try {
      while (this.#state !== 'stopped') {
        if (this.#state === 'paused') {
          await this.#idle();
          continue;
        }
        this.#dirty = false;
        this.#wake = new AbortController();
        this.#busy = true;
        let quanta = 0;
        try {
          const r = await this.#rt.run({
            provider: this.#provider,
            profile: this.#profile,
            maxQuanta: 1,
            signal: this.#stop.signal,
            wake: this.#wake.signal,
          });
          quanta = r.quanta;
        } catch (err) {
          if (this.#stop.signal.aborted) break;
          this.#onError(err);
          this.#error = asLibosError(err).toJSON();
          this.#state = 'paused';
          await this.#record('scheduler_paused', 'scheduler.pause', { error: this.#error }).catch((e: unknown) => this.#onError(e));
          continue;
        } finally {
          this.#busy = false;
          this.#wake = null;
        }
        this.#quanta += quanta;
        if (quanta === 0 && !this.#dirty && !this.#stop.signal.aborted) await this.#idle();
      }
    } finally {
      unwatch();
      if (lookAgain) clearInterval(lookAgain);
    }
  }
}
