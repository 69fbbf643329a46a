import type { GrantInput, LibosClient, ProcessDetail, ProcessSignal } from '@libos/client';
import { useEffect, useState } from 'preact/hooks';
import { usePerform } from './confirm.js';
import { errorText, pretty } from './format.js';
import { ProcessTabs } from './process-tabs.js';
import { StatusBadge } from './process-tree.js';

type Budget = ProcessDetail['budget'];

function BudgetTable(props: { readonly budget: Budget }) {
  const { limits, usage, remaining } = props.budget as {
    limits: Record<string, unknown>;
    usage: Record<string, unknown>;
    remaining: Record<string, unknown>;
  };
  const fields = [...new Set([...Object.keys(limits), ...Object.keys(usage), ...Object.keys(remaining)])].sort();
  const cell = (v: unknown) => (v === null || v === undefined ? '—' : String(v));
  return (
    <table data-testid="budget">
      <thead>
        <tr>
          <th>budget</th>
          <th>limit</th>
          <th>used</th>
          <th>left</th>
        </tr>
      </thead>
      <tbody>
        {fields.map((f) => (
          <tr key={f}>
            <td>{f}</td>
            <td>{cell(limits[f])}</td>
            <td>{cell(usage[f])}</td>
            <td>{cell(remaining[f])}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The tools the process can call now (its active Skills'), and on demand the rest of its table. */
function ToolTable(props: { readonly p: ProcessDetail }) {
  const { p } = props;
  const [all, setAll] = useState(false);
  const skillOf = new Map<string, string>();
  for (const [skill, loaded] of Object.entries(p.loaded_skills)) for (const t of loaded.tools) skillOf.set(t, skill);
  const visible = new Set(p.visible_tools);
  const table = [...new Set([...p.tool_table, ...p.visible_tools])].sort();
  const tools = all ? table : table.filter((t) => visible.has(t));
  return (
    <div>
      <button type="button" class="link" onClick={() => setAll(!all)} data-testid="tool-table-toggle">
        {all ? `callable now only (${visible.size})` : `whole table (${table.length})`}
      </button>
      <table data-testid="tool-table">
        <thead>
          <tr>
            <th>tool</th>
            <th>from</th>
            <th>visible</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((t) => (
            <tr key={t}>
              <td>
                <code>{t}</code>
              </td>
              <td>{skillOf.get(t) ?? 'image'}</td>
              <td>{visible.has(t) ? 'yes' : 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const SIGNALS: readonly { readonly signal: ProcessSignal; readonly label: string; readonly danger?: true }[] = [
  { signal: 'pause', label: 'Pause' },
  { signal: 'resume', label: 'Resume' },
  { signal: 'cancel', label: 'Cancel', danger: true },
  { signal: 'terminate', label: 'Terminate', danger: true },
];

function Actions(props: { readonly client: LibosClient; readonly pid: string }) {
  const perform = usePerform();
  const { client, pid } = props;
  const [text, setText] = useState('');
  const [tool, setTool] = useState('');
  const [args, setArgs] = useState('{}');
  const [result, setResult] = useState<string | null>(null);
  const [resource, setResource] = useState('');
  const [rights, setRights] = useState('read');

  const callTool = () =>
    perform(`Call ${tool}`, async (confirmed) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(args) as Record<string, unknown>;
      } catch (err) {
        throw new Error(`args: not JSON (${errorText(err)})`);
      }
      setResult(pretty(await client.call(pid, tool, parsed, { confirmed })));
    });

  return (
    <div class="actions">
      <div class="row">
        {SIGNALS.map((s) => (
          <button
            key={s.signal}
            type="button"
            class={s.danger ? 'danger' : ''}
            data-testid={`signal-${s.signal}`}
            onClick={() => void perform(s.label, (confirmed) => client.signal(pid, s.signal, { confirmed }))}
          >
            {s.label}
          </button>
        ))}
      </div>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim() === '') return;
          void perform('Send', async () => {
            await client.message(pid, { payload: text, from: 'human:owner' });
            setText('');
          });
        }}
      >
        <input value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="message to the process" aria-label="message" />
        <button type="submit">Send</button>
      </form>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (tool.trim() !== '') void callTool();
        }}
      >
        <input value={tool} onInput={(e) => setTool(e.currentTarget.value)} placeholder="tool" aria-label="tool" data-testid="call-tool" />
        <input
          value={args}
          onInput={(e) => setArgs(e.currentTarget.value)}
          placeholder="{ args }"
          aria-label="arguments"
          class="grow"
          data-testid="call-args"
        />
        <button type="submit" data-testid="call-submit">
          Call as process
        </button>
      </form>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          const list = rights.split(/[\s,]+/).filter((r) => r !== '') as GrantInput['rights'];
          if (resource.trim() === '' || list.length === 0) return;
          void perform(`Grant ${resource}`, async (confirmed) => {
            await client.grant(pid, { resource: resource.trim(), rights: list }, { confirmed });
            setResource('');
          });
        }}
      >
        <input
          value={resource}
          onInput={(e) => setResource(e.currentTarget.value)}
          placeholder="resource, e.g. clock:now"
          aria-label="resource"
          class="grow"
          data-testid="grant-resource"
        />
        <input
          value={rights}
          onInput={(e) => setRights(e.currentTarget.value)}
          placeholder="rights"
          aria-label="rights"
          data-testid="grant-rights"
        />
        <button type="submit" data-testid="grant-submit">
          Grant
        </button>
      </form>
      {result && <pre data-testid="call-result">{result}</pre>}
    </div>
  );
}

/** One process: status, wait state, budget, tool table, actions and its records. */
export function ProcessDetailView(props: { readonly client: LibosClient; readonly pid: string; readonly version: number }) {
  const { client, pid, version } = props;
  const [p, setP] = useState<ProcessDetail | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    client.process(pid).then(
      (d) => live && (setP(d), setError(null)),
      (err: unknown) => live && setError(errorText(err)),
    );
    return () => {
      live = false;
    };
  }, [client, pid, version]);

  if (error) return <p class="error">{error}</p>;
  if (!p || p.pid !== pid) return <p class="muted">Loading {pid}…</p>;
  return (
    <section class="detail" data-testid="process-detail" data-pid={pid}>
      <header>
        <h2>
          <code>{p.pid}</code> <StatusBadge status={p.status} />
        </h2>
        <p class="goal-full">{p.goal}</p>
        <dl>
          <dt>image</dt>
          <dd>{p.image_id}</dd>
          <dt>parent</dt>
          <dd>{p.parent_pid ?? '—'}</dd>
          <dt>directory</dt>
          <dd>{p.working_directory}</dd>
          <dt>updated</dt>
          <dd>{p.updated_at}</dd>
        </dl>
        {p.wait_state && (
          <details open>
            <summary>waiting</summary>
            <pre data-testid="wait-state">{pretty(p.wait_state)}</pre>
          </details>
        )}
        {p.outcome && (
          <details open>
            <summary>outcome</summary>
            <pre>{pretty(p.outcome)}</pre>
          </details>
        )}
      </header>
      <Actions client={client} pid={pid} />
      <div class="columns">
        <BudgetTable budget={p.budget} />
        <ToolTable p={p} />
      </div>
      <ProcessTabs client={client} pid={pid} version={version} />
    </section>
  );
}
