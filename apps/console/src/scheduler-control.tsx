import type { LibosClient, SchedulerStatus } from '@libos/client';
import { useEffect, useState } from 'preact/hooks';
import { usePerform } from './confirm.js';

/**
 * The server's scheduler: a background one shows its state with Pause / Resume; otherwise "Run scheduler" runs it
 * on request (at most 50 quanta).
 */
export function SchedulerControl(props: { readonly client: LibosClient; readonly version: number }) {
  const { client, version } = props;
  const perform = usePerform();
  const [status, setStatus] = useState<SchedulerStatus | null>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    client.schedulerStatus().then(
      (s) => live && setStatus(s),
      () => live && setStatus(null),
    );
    return () => {
      live = false;
    };
  }, [client, version, tick]);

  const act = (label: string, op: () => Promise<unknown>) => void perform(label, op).then(() => setTick((t) => t + 1));
  if (status?.mode === 'background') {
    return (
      <span class="row" data-testid="scheduler" data-state={status.state}>
        <span class="muted">
          scheduler: {status.state}
          {status.busy ? ' (busy)' : ''} · {status.model} · {status.quanta} quanta
        </span>
        {status.state === 'paused' ? (
          <button type="button" onClick={() => act('Resume scheduler', () => client.resumeScheduler())} data-testid="scheduler-resume">
            Resume
          </button>
        ) : (
          <button
            type="button"
            onClick={() => act('Pause scheduler', () => client.pauseScheduler('paused from the console'))}
            data-testid="scheduler-pause"
          >
            Pause
          </button>
        )}
      </span>
    );
  }
  return (
    <button
      type="button"
      onClick={() => act('Run', () => client.runScheduler(50))}
      data-testid="run-scheduler"
      title="run the scheduler for at most 50 quanta"
    >
      Run scheduler
    </button>
  );
}
