import type { LlmProvider, Runtime } from '@libos/kernel';
import type { BackgroundScheduler } from './background-scheduler.js';

/** What every route of one server shares. */
export interface ServerContext {
  readonly rt: Runtime;
  /** The model the scheduler route runs with; without one, `POST /api/scheduler/run` is 409. */
  readonly provider: LlmProvider | undefined;
  /** The scheduler running in the background (`serve({ background: true })`), if any. */
  readonly scheduler?: BackgroundScheduler | undefined;
  /** Milliseconds between SSE heartbeat comments. */
  readonly heartbeatMs: number;
  /** At most this many events are replayed to an SSE cursor; an older cursor is invalidated. */
  readonly sseReplayLimit: number;
  /** Receives errors no response can carry (an internal error is also answered 500; a stream error after a disconnect is not). */
  readonly onError: (err: unknown) => void;
}
