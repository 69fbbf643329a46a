// What the served runtime's background scheduler reports (`GET /api/scheduler`).
import type { ErrorPayload } from '@libos/sdk';

/** `running`: quanta run as work arrives; `paused`: none starts until a resume; `stopped`: the server is closing. */
export type SchedulerState = 'running' | 'paused' | 'stopped';

/** What `GET /api/scheduler` answers. */
export interface SchedulerStatus {
  readonly mode: 'background';
  readonly state: SchedulerState;
  readonly provider: string;
  readonly model: string;
  readonly profile: string | null;
  /** True while a quantum runs (a pause takes effect when it ends). */
  readonly busy: boolean;
  /** Quanta run since the server started. */
  readonly quanta: number;
  /** Why the scheduler paused itself (a store fault, not a process's failure), or null. */
  readonly error: ErrorPayload | null;
}
