import type { LibosClient } from '@libos/client';
import { useEffect, useState } from 'preact/hooks';
import { brief, clock, errorText } from './format.js';

type Row = Readonly<Record<string, unknown>>;
type Column = readonly [label: string, cell: (r: Row) => unknown];

interface Tab {
  readonly id: string;
  readonly label: string;
  load(client: LibosClient, pid: string): Promise<readonly unknown[]>;
  readonly columns: readonly Column[];
  readonly key: (r: Row) => string;
}

const at = (k: string) => (r: Row) => r[k];

/** Data labels in short: the ones that say something (`sensitivity=normal origin=llm`). */
const labelText = (labels: unknown) =>
  Object.entries((labels ?? {}) as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== 'unknown')
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');

/** Newest first, 200 at most: enough for a look; the CLI and the API page through the rest. */
const TABS: readonly Tab[] = [
  {
    id: 'messages',
    label: 'Messages',
    load: (c, pid) => c.messages(pid, { limit: '200' }),
    columns: [
      ['at', (r) => clock(r.created_at as string)],
      ['from', at('sender')],
      ['channel', at('channel')],
      ['kind', at('kind')],
      ['status', at('status')],
      ['payload', at('payload')],
    ],
    key: (r) => String(r.message_id),
  },
  {
    id: 'audit',
    label: 'Audit',
    load: async (c, pid) => (await c.audit(pid, { limit: '10000' })).slice(-200).reverse(),
    columns: [
      ['seq', at('seq')],
      ['at', (r) => clock(r.ts as string)],
      ['action', at('action')],
      ['target', at('target')],
      ['decision', at('decision')],
      ['details', at('details')],
    ],
    key: (r) => String(r.id),
  },
  {
    id: 'events',
    label: 'Events',
    load: async (c, pid) => (await c.events(pid, { limit: '10000' })).slice(-200).reverse(),
    columns: [
      ['seq', at('seq')],
      ['at', (r) => clock(r.ts as string)],
      ['type', at('type')],
      ['data', at('data')],
    ],
    key: (r) => String(r.id),
  },
  {
    id: 'objects',
    label: 'Objects',
    load: (c, pid) => c.objects({ pid, limit: '200' }),
    columns: [
      ['oid', at('oid')],
      ['namespace', at('namespace')],
      ['name', at('name')],
      ['type', at('type')],
      ['v', at('version')],
      ['labels', (r) => labelText(r.labels)],
      ['state', at('lifecycle')],
      ['payload', (r) => (r.payload_available ? 'here' : 'gone')],
    ],
    key: (r) => String(r.oid),
  },
  {
    id: 'capabilities',
    label: 'Capabilities',
    load: (c, pid) => c.capabilities(pid, true),
    columns: [
      ['id', at('id')],
      ['effect', at('effect')],
      ['resource', at('resource')],
      ['rights', at('rights')],
      ['status', at('status')],
      ['uses left', at('uses_remaining')],
      ['expires', at('expires_at')],
    ],
    key: (r) => String(r.id),
  },
  {
    id: 'llm-calls',
    label: 'Model calls',
    load: async (c, pid) => (await c.llmCalls(pid, 200)).slice().reverse(),
    columns: [
      ['at', (r) => clock(r.created_at as string)],
      ['model', at('model')],
      ['status', at('status')],
      ['tokens', at('total_tokens')],
      ['ms', (r) => Math.round(Number(r.latency_ms))],
      ['error', at('error')],
    ],
    key: (r) => String(r.id),
  },
];

/** A process's records, one tab at a time (metadata only: Objects show no payloads), refetched as events arrive. */
export function ProcessTabs(props: { readonly client: LibosClient; readonly pid: string; readonly version: number }) {
  const { client, pid, version } = props;
  const [tabId, setTabId] = useState('messages');
  const [rows, setRows] = useState<readonly Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const tab = TABS.find((t) => t.id === tabId)!;

  useEffect(() => {
    let live = true;
    tab.load(client, pid).then(
      (r) => live && (setRows(r as readonly Row[]), setError(null)),
      (err: unknown) => live && (setRows(null), setError(errorText(err))),
    );
    return () => {
      live = false;
    };
  }, [client, pid, version, tab]);

  return (
    <div class="tabs">
      <div class="tab-bar" role="tablist">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            aria-selected={t.id === tabId}
            class={t.id === tabId ? 'active' : ''}
            onClick={() => (setTabId(t.id), setRows(null))}
            data-testid={`tab-${t.id}`}
          >
            {t.label}
          </button>
        ))}
      </div>
      {error ? (
        <p class="error">{error}</p>
      ) : !rows ? (
        <p class="muted">Loading…</p>
      ) : rows.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <table data-testid={`rows-${tab.id}`}>
          <thead>
            <tr>
              {tab.columns.map(([label]) => (
                <th key={label}>{label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={tab.key(r)}>
                {tab.columns.map(([label, cell]) => (
                  <td key={label}>{brief(cell(r) ?? '')}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
