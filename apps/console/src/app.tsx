import { LibosApiError, LibosClient } from '@libos/client';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ConfirmProvider, usePerform } from './confirm.js';
import { EventFeed } from './event-feed.js';
import { errorText } from './format.js';
import { HumanQueue } from './human-queue.js';
import { Login } from './login.js';
import { ProcessDetailView } from './process-detail.js';
import { ProcessTree } from './process-tree.js';
import { SchedulerControl } from './scheduler-control.js';
import { forgetToken, keepToken, takeToken } from './token.js';
import { useLive } from './use-live.js';

/** The page: a token first, then the console. The API is this page's own origin. */
export function App() {
  const [token, setToken] = useState<string | null>(() => takeToken());
  const [error, setError] = useState<string | null>(null);
  const client = useMemo(() => (token ? new LibosClient({ url: location.origin, token }) : null), [token]);

  useEffect(() => {
    if (!client) return;
    client.health().catch((err: unknown) => {
      if (err instanceof LibosApiError && err.status === 401) {
        forgetToken();
        setToken(null);
      }
      setError(errorText(err));
    });
  }, [client]);

  if (!client) return <Login error={error} onToken={(t) => (keepToken(t), setError(null), setToken(t))} />;
  return <Console client={client} />;
}

function SpawnForm(props: { readonly client: LibosClient; readonly onSpawned: (pid: string) => void }) {
  const perform = usePerform();
  const [goal, setGoal] = useState('');
  return (
    <form
      class="row"
      onSubmit={(e) => {
        e.preventDefault();
        if (goal.trim() === '') return;
        void perform('Spawn', async () => {
          const p = await props.client.spawn({ goal });
          setGoal('');
          props.onSpawned(p.pid);
        });
      }}
    >
      <input
        class="grow"
        value={goal}
        onInput={(e) => setGoal(e.currentTarget.value)}
        placeholder="goal of a new process"
        aria-label="goal"
      />
      <button type="submit">Spawn</button>
    </form>
  );
}

function Console(props: { readonly client: LibosClient }) {
  const { client } = props;
  const live = useLive(client);
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <ConfirmProvider onDone={live.refresh}>
      <header class="top">
        <h1>libOS</h1>
        <span class="muted" data-testid="db">
          {live.snapshot?.db ?? ''}
        </span>
        <span class="grow" />
        <SchedulerControl client={client} version={live.version} />
        <button
          type="button"
          class="link"
          onClick={() => {
            forgetToken();
            location.reload();
          }}
        >
          forget token
        </button>
      </header>
      {live.error && <p class="error">{live.error}</p>}
      <main class="layout">
        <section class="panel processes">
          <h2>Processes</h2>
          <SpawnForm client={client} onSpawned={setSelected} />
          <ProcessTree processes={live.processes} selected={selected} onSelect={setSelected} />
        </section>
        <section class="panel main">
          {selected ? <ProcessDetailView client={client} pid={selected} version={live.version} /> : <p class="muted">Select a process.</p>}
        </section>
        <aside class="panel side">
          <h2>Waiting for you ({live.pending.length})</h2>
          <HumanQueue client={client} pending={live.pending} onSelect={setSelected} />
          <h2>Live events</h2>
          <EventFeed feed={live.feed} connection={live.connection} />
        </aside>
      </main>
    </ConfirmProvider>
  );
}
